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
	size_t i;

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
	for (i = 0; i < s->nr_stream; i++) {
		const struct pfc_srec *r = &s->stream[i];
		struct tep_event *ev;
		uint32_t n = 0;

		if (!wanted(rc, r))
			continue;
		ev = evs[s->stacks.stacks[r->stack].evsel];
		trace_seq_reset(&seq);
		if (ev) {
			if (pfc_tracedata_print(ev, r->cpu == UINT32_MAX ? -1 : (int)r->cpu, s->raw_data + r->raw_off,
						r->raw_len, &seq, &tb) < 0 || seq.state != TRACE_SEQ__GOOD)
				_exit(4);
			n = seq.len;
		}
		if (fwrite(&n, sizeof(n), 1, f) != 1 || (n && fwrite(seq.buffer, 1, n, f) != n))
			_exit(5);
	}
	if (fflush(f) != 0)
		_exit(5);
	_exit(0);
}

/* Read the child's "u32 length, text" records back into out. */
static int read_back(struct render *rc, FILE *f, struct pfc_tptext *out, const char **why, struct pfc_error *err)
{
	struct pfc_session *s = rc->s;
	size_t i, pos = 0;
	long size;

	if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		*why = "cannot read back the rendered payloads";
		return 0;
	}
	out->text = malloc((size_t)size + 1);
	out->off = calloc(s->nr_stream + 1, sizeof(*out->off));
	out->len = calloc(s->nr_stream + 1, sizeof(*out->len));
	if (!out->text || !out->off || !out->len) {
		pfc_tptext_free(out);
		return PFC_FAIL_NOOFF(err, NOMEM, "tracepoint payloads");
	}
	if (size && fread(out->text, 1, (size_t)size, f) != (size_t)size) {
		pfc_tptext_free(out);
		*why = "cannot read back the rendered payloads";
		return 0;
	}
	for (i = 0; i < s->nr_stream; i++) {
		uint32_t n;

		if (!wanted(rc, &s->stream[i]))
			continue;
		if ((size_t)size - pos < sizeof(n))
			break;
		memcpy(&n, out->text + pos, sizeof(n));
		pos += sizeof(n);
		if ((size_t)size - pos < n)
			break;
		out->off[i] = pos;
		out->len[i] = n;
		pos += n;
	}
	return 0;
}

int pfc_tptext_render(struct pfc_session *s, int (*wants)(void *arg, const struct pfc_srec *r), void *arg,
		      struct pfc_tptext *out, const char **why, struct pfc_error *err)
{
	struct render rc = { .s = s, .wants = wants, .arg = arg };
	size_t i, nr = 0;
	FILE *f;
	pid_t pid;
	int status, ret;

	memset(out, 0, sizeof(*out));
	*why = NULL;
	for (i = 0; i < s->nr_stream; i++)
		if (wanted(&rc, &s->stream[i]))
			nr++;
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
	ret = read_back(&rc, f, out, why, err);
	fclose(f);
	return ret;
}

void pfc_tptext_free(struct pfc_tptext *t)
{
	free(t->text);
	free(t->off);
	free(t->len);
	memset(t, 0, sizeof(*t));
}
