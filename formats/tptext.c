/*
 * tptext.c - the text of a session's tracepoint payloads (perf script's `trace` field), for
 * every writer that shows them (perf-script text, the trace.zip's perf.data.txt).  The
 * tracing data is parsed and the payloads printed by libtraceevent in a child process,
 * because libtraceevent trusts format text: a hostile one costs the payloads, never the
 * conversion.  Parsing the tracing data itself is converter/perffile/tracedata.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>
#include "converter/session.h"
#include "converter/native/symtab.h"
#include "converter/perffile/tracedata.h"
#include "formats/tptext.h"


struct render {
	struct pfc_session *s;
	int (*wants)(void *arg, const struct pfc_srec *r);
	void *arg;
	const struct pfc_symtab *ksyms;  /* for kernel addresses in payloads */
	int ksyms_tried;
};

static int wanted(const struct render *rc, const struct pfc_srec *r)
{
	const struct pfc_evsel *ev = rc->s->rd.evsels[rc->s->stacks.stacks[r->stack].evsel];

	return r->raw_len && ev->attr.type == PERF_TYPE_TRACEPOINT && (!rc->wants || rc->wants(rc->arg, r));
}

/* libtraceevent's function resolver: kernel function pointers in payloads (%ps, %pS) are
 * named from the kernel's symbols, as perf's machine__resolve_kernel_addr names them.
 * They are read on the first such pointer only. */
static char *resolve_kernel_addr(void *priv, unsigned long long *addrp, char **modp)
{
	struct render *rc = priv;
	const struct pfc_sym *sym;

	if (!rc->ksyms_tried) {
		rc->ksyms_tried = 1;
		rc->ksyms = pfc_session_kernel_syms(rc->s);
	}
	if (!rc->ksyms || !(sym = pfc_symtab_find(rc->ksyms, *addrp)))
		return NULL;
	*modp = (char *)sym->module;
	*addrp = sym->start;
	return (char *)sym->name;
}

/* The child: parse the formats, write "u32 length, text" for every wanted payload, in
 * stream order, to f.  Exit status 4: out of memory, 5: cannot write. */
static void render_child(struct render *rc, FILE *f)
{
	struct pfc_session *s = rc->s;
	struct pfc_error err;
	struct tep_handle *tep;
	struct trace_seq seq;
	struct pfc_tracebuf tb = { 0 };
	struct tep_event **evs;
	struct pfc_stream_cur cur;
	struct pfc_srec rec;
	size_t i;
	int got;

	memset(&err, 0, sizeof(err));
	/* the parent checked the framing: only memory can fail here */
	if (pfc_tracedata_parse(s->rd.tracing_data.data, s->rd.tracing_data.size, s->rd.tracing_data_offset, &tep,
				&err) < 0)
		_exit(4);
	/* perf script sets its resolver when the session opens: a pipe stream's tracing data
	 * comes later, as a record, and then kernel addresses stay numbers */
	if (!s->rd.pipe_mode && tep_set_function_resolver(tep, resolve_kernel_addr, rc) < 0)
		_exit(4);
	evs = calloc(s->rd.nr_evsels + 1, sizeof(*evs));
	if (!evs)
		_exit(4);
	for (i = 0; i < s->rd.nr_evsels; i++)
		evs[i] = pfc_tracedata_event(tep, s->rd.evsels[i]->attr.config);
	trace_seq_init(&seq);
	if (pfc_stream_open(&cur, &s->stream) < 0)
		_exit(4);
	while ((got = pfc_stream_next(&cur, &rec)) > 0) {
		const struct pfc_srec *r = &rec;
		struct tep_event *ev;
		uint32_t n = 0;

		if (!wanted(rc, r))
			continue;
		ev = evs[s->stacks.stacks[r->stack].evsel];
		trace_seq_reset(&seq);
		if (ev) {
			if (pfc_tracedata_print(ev, r->cpu == UINT32_MAX ? -1 : (int)r->cpu, r->raw, r->raw_len, &seq,
						&tb) < 0 || seq.state != TRACE_SEQ__GOOD)
				_exit(4);
			n = seq.len;
		}
		if (fwrite(&n, sizeof(n), 1, f) != 1 || (n && fwrite(seq.buffer, 1, n, f) != n))
			_exit(5);
	}
	if (got < 0)
		_exit(5);
	if (fflush(f) != 0)
		_exit(5);
	_exit(0);
}

/* Whether any event of the recording is a tracepoint with payloads (PERF_SAMPLE_RAW): without
 * one, no sample has a payload, and the stream is not read for them. */
static int any_payloads(const struct pfc_session *s)
{
	size_t i;

	for (i = 0; i < s->rd.nr_evsels; i++)
		if (s->rd.evsels[i]->attr.type == PERF_TYPE_TRACEPOINT && (s->rd.evsels[i]->attr.sample_type & PERF_SAMPLE_RAW))
			return 1;
	return 0;
}

int pfc_tptext_render(struct pfc_session *s, int (*wants)(void *arg, const struct pfc_srec *r), void *arg,
		      struct pfc_tptext *out, const char **why, struct pfc_error *err)
{
	struct render rc = { .s = s, .wants = wants, .arg = arg };
	struct pfc_stream_cur cur;
	struct pfc_srec rec;
	uint64_t nr = 0;
	FILE *f;
	pid_t pid;
	int status, ret, got;

	memset(out, 0, sizeof(*out));
	*why = NULL;
	out->s = s;
	out->wants = wants;
	out->arg = arg;
	/* only whether there is any */
	if (!any_payloads(s))
		return 0;
	if (pfc_stream_open(&cur, &s->stream) < 0)
		return PFC_FAIL_NOOFF(err, NOMEM, "tracepoint payloads");
	while ((got = pfc_stream_next(&cur, &rec)) > 0)
		if (wanted(&rc, &rec)) {
			nr = s->stream.nr;
			break;
		}
	pfc_stream_close(&cur);
	if (got < 0)
		return PFC_FAIL_NOOFF(err, IO, "cannot read the sample stream back");
	if (!nr)
		return 0;
	if (!s->rd.tracing_data.data || !s->rd.tracing_data.size) {
		*why = "the recording has no tracing data";
		return 0;
	}
	ret = pfc_tracedata_check(s->rd.tracing_data.data, s->rd.tracing_data.size, s->rd.tracing_data_offset, err);
	if (ret < 0) {
		*why = "malformed tracing data";
		return ret;
	}
	if (!(f = tmpfile())) {
		*why = "cannot create a temporary file";
		return PFC_FAIL_NOOFF(err, IO, "cannot create a temporary file: %s", strerror(errno));
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		ret = PFC_FAIL_NOOFF(err, IO, "cannot start a process: %s", strerror(errno));
		fclose(f);
		*why = "cannot start a process to render them";
		return ret;
	}
	if (pid == 0) {
		alarm(60 + (unsigned)(nr / 20000));	/* a format that loops must not hang the conversion */
		render_child(&rc, f);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			fclose(f);
			*why = "lost the process that rendered them";
			return 0;
		}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fclose(f);
		*why = WIFEXITED(status) && WEXITSTATUS(status) == 4 ? "out of memory"
		       : "the recording's tracepoint formats made libtraceevent fail";
		return 0;
	}
	if (fflush(f) != 0 || fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		*why = "cannot read back the rendered payloads";
		return 0;
	}
	out->f = f;
	return 0;
}

int pfc_tptext_rewind(struct pfc_tptext *t)
{
	if (t->f && fseek(t->f, 0, SEEK_SET) != 0) {
		fclose(t->f);
		t->f = NULL;
		return -1;
	}
	return 0;
}

int pfc_tptext_next(struct pfc_tptext *t, const struct pfc_srec *r, const char **text, uint32_t *len)
{
	struct render rc = { .s = t->s, .wants = t->wants, .arg = t->arg };
	uint32_t n;

	*text = NULL;
	*len = 0;
	if (!t->f || !wanted(&rc, r))
		return 0;
	if (fread(&n, sizeof(n), 1, t->f) != 1)
		goto lost;
	if (n > t->cap) {
		char *b = realloc(t->text, n);
		if (!b)
			goto lost;
		t->text = b;
		t->cap = n;
	}
	if (n && fread(t->text, 1, n, t->f) != n)
		goto lost;
	*text = t->text;
	*len = n;
	return 0;
lost:
	fclose(t->f);
	t->f = NULL;
	return -1;
}

void pfc_tptext_free(struct pfc_tptext *t)
{
	if (t->f)
		fclose(t->f);
	free(t->text);
	memset(t, 0, sizeof(*t));
}
