/*
 * diagipc.c - the bytes of the .NET diagnostics IPC messages perfconv sends (EnablePerfMap,
 * DisablePerfMap, CollectTracing2, StopTracing, ResumeRuntime), of their replies and of the
 * advertise message of a runtime that connects to perfconv's own port, the runtime provider's
 * keywords for an event list, and the /proc texts and socket names that lead to the
 * runtime's socket.  It owns no socket and prints nothing: cli/perfmapctl.c and
 * cli/record_dotnet.c do the I/O.  A reply comes from whatever listens on the socket, so it
 * (and an advertise from whatever connects to the port) is decoded from bytes with every
 * length checked, and a malformed one is an error value
 * with the offset of the bad byte.  The nettrace stream after a session's reply is not read here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "converter/util/bytes.h"
#include "converter/jit/diagipc.h"

/* the protocol is little-endian */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define SWAP_LE 1
#else
#define SWAP_LE 0
#endif

static const uint8_t magic[PFC_DIAGIPC_MAGIC_LEN] = "DOTNET_IPC_V1";	/* with its NUL: 14 bytes */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

size_t pfc_diagipc_encode_perfmap(uint8_t *buf, int enable, enum pfc_perfmap_type type)
{
	size_t len = PFC_DIAGIPC_HEADER_LEN + (enable ? 4u : 0u);

	memcpy(buf, magic, PFC_DIAGIPC_MAGIC_LEN);
	put16(buf + 14, (uint16_t)len);
	buf[16] = PFC_DIAGIPC_SET_PROCESS;
	buf[17] = enable ? PFC_DIAGIPC_ENABLE_PERFMAP : PFC_DIAGIPC_DISABLE_PERFMAP;
	put16(buf + 18, 0);
	if (enable) {
		uint32_t t = (uint32_t)type;
		buf[20] = (uint8_t)t;
		buf[21] = (uint8_t)(t >> 8);
		buf[22] = (uint8_t)(t >> 16);
		buf[23] = (uint8_t)(t >> 24);
	}
	return len;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static void header(uint8_t *buf, size_t len, uint8_t set, uint8_t id)
{
	memcpy(buf, magic, PFC_DIAGIPC_MAGIC_LEN);
	put16(buf + 14, (uint16_t)len);
	buf[16] = set;
	buf[17] = id;
	put16(buf + 18, 0);
}

/* a protocol string: uint32 length in UTF-16 units with the terminator, then UTF-16LE; an
 * empty or absent one is length 0, which the runtime reads as NULL.  Bytes needed, 0 when
 * s is not ASCII; written only when they fit in cap. */
static size_t put_string(uint8_t *p, size_t cap, const char *s)
{
	size_t n = s ? strlen(s) : 0, i, need = 4 + (n ? 2 * (n + 1) : 0);

	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] >= 0x80 || !s[i])
			return 0;
	if (need > cap)
		return need;
	put32(p, n ? (uint32_t)(n + 1) : 0);
	for (i = 0; i < n; i++)
		put16(p + 4 + 2 * i, (uint8_t)s[i]);
	if (n)
		put16(p + 4 + 2 * n, 0);
	return need;
}

size_t pfc_diagipc_encode_collect(uint8_t *buf, size_t cap, uint32_t buffer_mb, int rundown,
				  const struct pfc_diagipc_provider *p, size_t n)
{
	size_t len = PFC_DIAGIPC_HEADER_LEN + 4 + 4 + 1 + 4, i, k;

	if (n > 64)
		return 0;
	for (i = 0; i < n; i++) {
		size_t room = len + 12 <= cap ? cap - len - 12 : 0;
		if (!p[i].name || !*p[i].name)
			return 0;
		if (len + 12 <= cap) {
			put64(buf + len, p[i].keywords);
			put32(buf + len + 8, p[i].level);
		}
		len += 12;
		if (!(k = put_string(buf + len, room, p[i].name)))
			return 0;
		len += k;
		room = len <= cap ? cap - len : 0;
		if (!(k = put_string(buf + len, room, p[i].args)))
			return 0;
		len += k;
	}
	if (len > cap || len > PFC_DIAGIPC_COLLECT_MAX)
		return 0;
	header(buf, len, PFC_DIAGIPC_SET_EVENTPIPE, PFC_DIAGIPC_COLLECT_TRACING2);
	put32(buf + 20, buffer_mb);
	put32(buf + 24, PFC_DIAGIPC_FORMAT_NETTRACE);
	buf[28] = rundown ? 1 : 0;
	put32(buf + 29, (uint32_t)n);
	return len;
}

size_t pfc_diagipc_encode_stop(uint8_t *buf, uint64_t session)
{
	header(buf, PFC_DIAGIPC_STOP_LEN, PFC_DIAGIPC_SET_EVENTPIPE, PFC_DIAGIPC_STOP_TRACING);
	put64(buf + 20, session);
	return PFC_DIAGIPC_STOP_LEN;
}

size_t pfc_diagipc_encode_resume(uint8_t *buf)
{
	header(buf, PFC_DIAGIPC_HEADER_LEN, PFC_DIAGIPC_SET_PROCESS, PFC_DIAGIPC_RESUME_RUNTIME);
	return PFC_DIAGIPC_HEADER_LEN;
}

static const uint8_t advertise_magic[8] = "ADVR_V1";	/* with its NUL: 8 bytes */

/* Linux's PID_MAX_LIMIT (4M on 64-bit): a larger pid is no process's */
#define PID_LIMIT 4194304u

int pfc_diagipc_decode_advertise(const uint8_t *buf, size_t len, struct pfc_diagipc_advertise *a,
				 struct pfc_error *e)
{
	size_t i, n = len < sizeof(advertise_magic) ? len : sizeof(advertise_magic);

	memset(a, 0, sizeof(*a));
	/* as with a reply, the magic is checked as far as it came: a peer that is no runtime is
	 * told at its first wrong byte, not after a timeout */
	for (i = 0; i < n; i++)
		if (buf[i] != advertise_magic[i])
			return PFC_FAIL(e, CORRUPT, i, "not a runtime's advertise message: byte 0x%02x where the "
					"magic \"ADVR_V1\" has 0x%02x", buf[i], advertise_magic[i]);
	if (len < PFC_DIAGIPC_ADVERTISE_LEN)
		return -PFC_ERR_TRUNCATED;
	memcpy(a->cookie, buf + 8, sizeof(a->cookie));
	a->pid = pfc_ld64(buf + 24, SWAP_LE);
	if (a->pid == 0 || a->pid > PID_LIMIT)
		return PFC_FAIL(e, CORRUPT, 24, "advertised pid %llu is no process's (1 to %u)",
				(unsigned long long)a->pid, PID_LIMIT);
	return 0;
}

/* The reply of either kind: ok_payload is the size of an OK reply's payload (4, an HRESULT;
 * 8, a session id); an Error reply always carries an HRESULT. */
static int decode(const uint8_t *buf, size_t len, struct pfc_diagipc_reply *r, size_t *need,
		  struct pfc_error *e, size_t ok_payload)
{
	size_t i, n = len < PFC_DIAGIPC_MAGIC_LEN ? len : PFC_DIAGIPC_MAGIC_LEN, payload;
	uint16_t size;

	memset(r, 0, sizeof(*r));
	if (need)
		*need = PFC_DIAGIPC_HEADER_LEN;
	/* the magic is checked as far as it came, so that a stream of something else is told
	 * at once and not by a timeout */
	for (i = 0; i < n; i++)
		if (buf[i] != magic[i])
			return PFC_FAIL(e, CORRUPT, i, "not a diagnostics IPC reply: byte 0x%02x where the magic "
					"\"DOTNET_IPC_V1\" has 0x%02x", buf[i], magic[i]);
	if (len < PFC_DIAGIPC_HEADER_LEN)
		return -PFC_ERR_TRUNCATED;
	size = pfc_ld16(buf + 14, SWAP_LE);
	r->size = size;
	r->command_set = buf[16];
	r->command_id = buf[17];
	if (size < PFC_DIAGIPC_HEADER_LEN)
		return PFC_FAIL(e, CORRUPT, 14, "reply size %u is smaller than its %u-byte header", size,
				PFC_DIAGIPC_HEADER_LEN);
	if (r->command_set != PFC_DIAGIPC_SET_SERVER)
		return PFC_FAIL(e, CORRUPT, 16, "reply command set 0x%02x, not the server's 0xff", r->command_set);
	if (r->command_id != PFC_DIAGIPC_OK && r->command_id != PFC_DIAGIPC_ERROR)
		return PFC_FAIL(e, CORRUPT, 17, "reply command id 0x%02x is neither OK (0x00) nor Error (0xff)",
				r->command_id);
	r->ok = r->command_id == PFC_DIAGIPC_OK;
	payload = r->ok ? ok_payload : 4;
	if (size < PFC_DIAGIPC_HEADER_LEN + payload)
		return PFC_FAIL(e, CORRUPT, 14, "reply size %u leaves no room for its %zu-byte %s", size, payload,
				payload == 8 ? "session id" : "HRESULT");
	if (size > PFC_DIAGIPC_REPLY_MAX)
		return PFC_FAIL(e, CORRUPT, 14, "reply size %u is longer than a reply to these commands (at most %u)",
				size, PFC_DIAGIPC_REPLY_MAX);
	if (need)
		*need = size;
	if (len < size)
		return -PFC_ERR_TRUNCATED;
	if (payload == 8)
		r->session = pfc_ld64(buf + PFC_DIAGIPC_HEADER_LEN, SWAP_LE);
	else
		r->hresult = pfc_ld32(buf + PFC_DIAGIPC_HEADER_LEN, SWAP_LE);
	return 0;
}

int pfc_diagipc_decode_reply(const uint8_t *buf, size_t len, struct pfc_diagipc_reply *r, size_t *need,
			     struct pfc_error *e)
{
	/* both replies of the perf map commands carry an int32 HRESULT */
	return decode(buf, len, r, need, e, 4);
}

int pfc_diagipc_decode_session_reply(const uint8_t *buf, size_t len, struct pfc_diagipc_reply *r, size_t *need,
				     struct pfc_error *e)
{
	return decode(buf, len, r, need, e, 8);
}

/* Microsoft-Windows-DotNETRuntime's keywords (dotnet/runtime ClrEtwAll.man): each word
 * turns on the events it names.  alloc is GC at the verbose level, where the runtime adds
 * GCAllocationTick (about every 100 KB allocated, with the type and a stack).  The stack takes
 * no keyword of its own: EventPipe walks the managed stack of every event whose manifest entry
 * wants one, GCAllocationTick's included, unless the session asks for none (CollectTracing3);
 * the Stack keyword 0x40000000 is ETW's.  Runtime 10.0.12's ticks carry their stacks at 0x1,
 * level 5 (tests/record.sh, record/alloc: the allocating methods under the types). */
static const struct {
	const char *word;
	uint64_t keywords;
	uint32_t level;
} event_words[] = {
	{ "gc", 0x1, 4 },
	{ "alloc", 0x1, 5 },
	{ "loader", 0x8, 4 },
	{ "jit", 0x10, 4 },
	{ "contention", 0x4000, 4 },
	{ "exceptions", 0x8000, 4 },
	{ "threadpool", 0x10000, 4 },
};

int pfc_diagipc_events_parse(const char *list, uint64_t *keywords, uint32_t *level, char *bad, size_t cap)
{
	*keywords = 0;
	*level = 0;
	if (!strcmp(list, "none"))
		return 0;
	while (1) {
		size_t len = strcspn(list, ","), i;
		for (i = 0; i < sizeof(event_words) / sizeof(event_words[0]); i++)
			if (strlen(event_words[i].word) == len && !strncmp(list, event_words[i].word, len))
				break;
		if (i == sizeof(event_words) / sizeof(event_words[0])) {
			if (cap)
				snprintf(bad, cap, "%.*s", (int)len, list);
			return -1;
		}
		*keywords |= event_words[i].keywords;
		if (event_words[i].level > *level)
			*level = event_words[i].level;
		if (!list[len])
			return 0;
		list += len + 1;
	}
}

const char *pfc_diagipc_hresult_name(uint32_t hr)
{
	switch (hr) {
	case 0: return "S_OK";
	case PFC_DIAGIPC_E_BAD_ENCODING: return "BAD_ENCODING";
	case PFC_DIAGIPC_E_UNKNOWN_COMMAND: return "UNKNOWN_COMMAND";
	case PFC_DIAGIPC_E_UNKNOWN_MAGIC: return "UNKNOWN_MAGIC";
	case PFC_DIAGIPC_E_UNKNOWN_ERROR: return "UNKNOWN_ERROR";
	case PFC_DIAGIPC_E_NOTSUPPORTED: return "NOTSUPPORTED";
	case PFC_DIAGIPC_E_FAIL: return "E_FAIL";
	case PFC_DIAGIPC_E_INVALIDARG: return "E_INVALIDARG";
	}
	return NULL;
}

/* the line of text that starts with key at a line start, its rest in [*v, *end) */
static int find_line(const char *s, size_t len, const char *key, const char **v, const char **end)
{
	size_t k = strlen(key), i = 0;

	while (i < len) {
		const char *nl = memchr(s + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - s) : len;
		if (e - i >= k && !memcmp(s + i, key, k)) {
			*v = s + i + k;
			*end = s + e;
			return 1;
		}
		i = e + 1;
	}
	return 0;
}

long pfc_diagipc_status_nstgid(const char *status, size_t len)
{
	const char *p, *end;
	long last = 0;

	if (!find_line(status, len, "NStgid:", &p, &end))
		return 0;
	/* "NStgid:\t12345\t1": outermost first; the last field is the pid the process sees */
	while (p < end) {
		long v = 0;
		int digits = 0;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		while (p < end && *p >= '0' && *p <= '9' && v < 100000000) {
			v = v * 10 + (*p++ - '0');
			digits = 1;
		}
		if (!digits || (p < end && *p != ' ' && *p != '\t'))
			return 0;
		last = v;
	}
	return last;
}

uint64_t pfc_diagipc_stat_starttime(const char *stat, size_t len)
{
	const char *p = NULL, *end = stat + len;
	uint64_t v = 0;
	size_t i;
	int field;

	/* the command name in parentheses may hold anything, ')' too: fields start after the last */
	for (i = len; i > 0; i--)
		if (stat[i - 1] == ')') {
			p = stat + i;
			break;
		}
	if (!p)
		return 0;
	/* after ")" comes field 3 (state): skip fields 3 to 21, the start time is field 22 */
	for (field = 3; field < 22; field++) {
		while (p < end && *p == ' ')
			p++;
		while (p < end && *p != ' ')
			p++;
	}
	while (p < end && *p == ' ')
		p++;
	if (p >= end || *p < '0' || *p > '9')
		return 0;
	while (p < end && *p >= '0' && *p <= '9' && v < UINT64_MAX / 10 - 9)
		v = v * 10 + (uint64_t)(*p++ - '0');
	return v;
}

int pfc_diagipc_environ_get(const char *env, size_t len, const char *name, char *out, size_t cap)
{
	size_t k = strlen(name), i = 0;

	while (i < len) {
		const char *z = memchr(env + i, 0, len - i);
		size_t e = z ? (size_t)(z - env) : len;
		if (e - i > k && !memcmp(env + i, name, k) && env[i + k] == '=') {
			size_t n = e - i - k - 1;
			if (cap) {
				if (n >= cap)
					n = cap - 1;
				memcpy(out, env + i + k + 1, n);
				out[n] = 0;
			}
			return 1;
		}
		i = e + 1;
	}
	return 0;
}

int pfc_diagipc_socket_name(const char *name, long pid, uint64_t *key)
{
	static const char pre[] = "dotnet-diagnostic-", post[] = "-socket";
	const char *p;
	char *end;
	unsigned long long k;
	long v;

	if (strncmp(name, pre, sizeof(pre) - 1))
		return 0;
	p = name + sizeof(pre) - 1;
	if (*p < '0' || *p > '9')
		return 0;
	v = strtol(p, &end, 10);
	if (v != pid || *end != '-' || end[1] < '0' || end[1] > '9')
		return 0;
	p = end + 1;
	k = strtoull(p, &end, 10);
	if (strcmp(end, post))
		return 0;
	*key = k;
	return 1;
}
