/*
 * tuning.h - the settings that the tests and measurements give through PERFCONV_* variables
 * (docs/development.md, "Environment variables"), as values.  cli/env.c reads the environment
 * once and hands this down with the options; nothing below cli/ calls getenv.  All zero (or a
 * NULL pointer to it) is a conversion with no variable set.
 */
#ifndef PFC_TUNING_H
#define PFC_TUNING_H

#include <stddef.h>
#include <stdint.h>

struct pfc_tuning {
	/* the conversion (converter/) */
	const char *running_kernel;  /* PERFCONV_RUNNING_KERNEL: stands for the running kernel; NULL: the real one */
	const char *proc;            /* PERFCONV_PROC: stands for /proc; NULL: /proc */
	const char *tmp;             /* PERFCONV_TMP: stands for /tmp */
	const char *debug_dir;       /* PERFCONV_DEBUG_DIR: stands for /usr/lib/debug */
	int no_preload;              /* PERFCONV_PRELOAD=0: kernel symbols read when a frame needs them */
	unsigned long preload_delay_ms; /* PERFCONV_PRELOAD_DELAY_MS: the preload thread waits first */
	int no_pipeline;             /* PERFCONV_PIPELINE=0: records read and processed on one thread */
	uint32_t uc_window;          /* PERFCONV_UC_WINDOW: the unwound-stack cache's window; 0: its default */
	int stream_mem_set;          /* PERFCONV_STREAM_MEM given: */
	size_t stream_mem;           /*   bytes of the sample stream kept in memory */
	/* the pack writer (converter/files/packwrite.c, formats/perfpack.c) */
	int pack_no_pre;             /* PERFCONV_PACK_PRE=0: no compression beside the conversion */
	int pack_no_sparse;          /* PERFCONV_PACK_SPARSE=0: holes written as zeros */
	int pack_whole;              /* PERFCONV_PACK_WHOLE=1: every file packed whole */
	/* trace.zip (formats/zipfile.c, formats/zipdeflate.c); 0: the default */
	uint64_t text_chunk;         /* PERFCONV_TEXT_CHUNK */
	uint64_t text_piece;         /* PERFCONV_TEXT_PIECE */
	uint64_t deflate_out;        /* PERFCONV_DEFLATE_OUT */
	uint64_t writeback_step;     /* PERFCONV_WRITEBACK_STEP */
	uint64_t ctf_stream_from;    /* PERFCONV_CTF_STREAM_FROM: a CTF channel's bytes before it is streamed */
};

#endif
