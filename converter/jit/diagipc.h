/*
 * diagipc.h - the messages of the .NET diagnostics IPC protocol that perfconv sends
 * (EnablePerfMap and DisablePerfMap, .NET 8+; CollectTracing2 and StopTracing, the EventPipe
 * session of perfconv record; ResumeRuntime) and the replies and advertise messages it reads, as bytes; the runtime provider's
 * keywords for an event list; and the few /proc and socket-name texts needed to find the
 * runtime's socket.  No I/O here: the command line (cli/perfmapctl.c, cli/record_dotnet.c)
 * connects, sends and reads.  A reply is untrusted input.
 */
#ifndef PFC_DIAGIPC_H
#define PFC_DIAGIPC_H

#include <stddef.h>
#include <stdint.h>
#include "converter/util/error.h"

/* dotnet/diagnostics documentation/design-docs/ipc-protocol.md: a 20-byte header,
 * magic "DOTNET_IPC_V1\0" (14 bytes), uint16 size (header + payload), uint8 command set,
 * uint8 command id, uint16 reserved; little-endian throughout. */
#define PFC_DIAGIPC_HEADER_LEN 20u
#define PFC_DIAGIPC_MAGIC_LEN 14u
#define PFC_DIAGIPC_REQUEST_MAX 24u
/* the longest reply accepted: these commands' replies are 24 bytes (header and HRESULT) */
#define PFC_DIAGIPC_REPLY_MAX 256u

/* Command set 0x04 (Process): 0x01 ResumeRuntime (no payload), 0x05 EnablePerfMap (payload
 * uint32 type), 0x06 DisablePerfMap */
#define PFC_DIAGIPC_SET_PROCESS 0x04u
#define PFC_DIAGIPC_RESUME_RUNTIME 0x01u
#define PFC_DIAGIPC_ENABLE_PERFMAP 0x05u
#define PFC_DIAGIPC_DISABLE_PERFMAP 0x06u
/* the server's replies: command set 0xFF, id 0x00 OK or 0xFF Error, each with an int32 HRESULT */
#define PFC_DIAGIPC_SET_SERVER 0xFFu
#define PFC_DIAGIPC_OK 0x00u
#define PFC_DIAGIPC_ERROR 0xFFu

/* The runtime's perfMapType, the same enum as DOTNET_PerfMapEnabled */
enum pfc_perfmap_type {
	PFC_PERFMAP_TYPE_ALL = 1,       /* perf map (and perfinfo) and jitdump */
	PFC_PERFMAP_TYPE_JITDUMP = 2,
	PFC_PERFMAP_TYPE_PERFMAP = 3,
};

/* Command set 0x02 (EventPipe): 0x01 StopTracing (payload uint64 session id), 0x03
 * CollectTracing2 (uint32 circularBufferMB, uint32 format, bool requestRundown, providers) */
#define PFC_DIAGIPC_SET_EVENTPIPE 0x02u
#define PFC_DIAGIPC_STOP_TRACING 0x01u
#define PFC_DIAGIPC_COLLECT_TRACING2 0x03u
#define PFC_DIAGIPC_FORMAT_NETTRACE 1u
#define PFC_DIAGIPC_STOP_LEN 28u
/* the request holds at most this many bytes (its uint16 size field) */
#define PFC_DIAGIPC_COLLECT_MAX 65535u

/* HRESULTs a runtime answers with (src/native/eventpipe/ds-types.h) */
#define PFC_DIAGIPC_E_BAD_ENCODING 0x80131384u
#define PFC_DIAGIPC_E_UNKNOWN_COMMAND 0x80131385u   /* .NET 5 to 7 for 0x0405/0x0406 */
#define PFC_DIAGIPC_E_UNKNOWN_MAGIC 0x80131386u
#define PFC_DIAGIPC_E_UNKNOWN_ERROR 0x80131387u
#define PFC_DIAGIPC_E_NOTSUPPORTED 0x80131515u
#define PFC_DIAGIPC_E_FAIL 0x80004005u
#define PFC_DIAGIPC_E_INVALIDARG 0x80070057u

/* The request into buf (PFC_DIAGIPC_REQUEST_MAX bytes): EnablePerfMap with type, or
 * DisablePerfMap when enable is 0.  Returns its length. */
size_t pfc_diagipc_encode_perfmap(uint8_t *buf, int enable, enum pfc_perfmap_type type);

struct pfc_diagipc_reply {
	uint16_t size;                  /* the header's size: header and payload */
	uint8_t command_set, command_id;
	int ok;                         /* command id OK (else Error) */
	uint32_t hresult;               /* an Error's, or the OK of the perf map commands */
	uint64_t session;               /* pfc_diagipc_decode_session_reply's OK: the session id */
};

/* Decode a reply from the len bytes read so far.  0: a whole reply, in r; -PFC_ERR_TRUNCATED:
 * not all of it yet (read more: at least *need bytes in all, when need is not NULL); any other
 * negative error: the bytes are no reply to these commands, with the offset in e.  Bytes after
 * the reply's size are not looked at; a reply longer than PFC_DIAGIPC_REPLY_MAX is malformed. */
int pfc_diagipc_decode_reply(const uint8_t *buf, size_t len, struct pfc_diagipc_reply *r, size_t *need,
			     struct pfc_error *e);

/* The same for the reply to CollectTracing2 or StopTracing, whose OK carries a uint64
 * session id (a 28-byte reply) and whose Error an HRESULT.  After CollectTracing2's OK the
 * nettrace stream follows on the connection: the caller reads no further than *need. */
int pfc_diagipc_decode_session_reply(const uint8_t *buf, size_t len, struct pfc_diagipc_reply *r, size_t *need,
				     struct pfc_error *e);

/* One provider of an EventPipe session: keywords, level (0 to 5, 5 verbose), an ASCII name
 * and filter arguments (NULL or "" for none). */
struct pfc_diagipc_provider {
	uint64_t keywords;
	uint32_t level;
	const char *name, *args;
};

/* CollectTracing2 into buf[cap] (nettrace format): its length, 0 when it does not fit or a
 * name is not ASCII. */
size_t pfc_diagipc_encode_collect(uint8_t *buf, size_t cap, uint32_t buffer_mb, int rundown,
				  const struct pfc_diagipc_provider *p, size_t n);

/* StopTracing of session into buf (PFC_DIAGIPC_STOP_LEN bytes); returns its length. */
size_t pfc_diagipc_encode_stop(uint8_t *buf, uint64_t session);

/* ResumeRuntime into buf (PFC_DIAGIPC_HEADER_LEN bytes): a runtime started with
 * DOTNET_DiagnosticPorts=PATH,connect,suspend waits for it before its first managed code.
 * Returns its length; the reply is an HRESULT one (pfc_diagipc_decode_reply). */
size_t pfc_diagipc_encode_resume(uint8_t *buf);

/* The advertise message a runtime sends first on every connection it makes to a connect-mode
 * diagnostic port (ipc-protocol.md, "Advertise Protocol"): magic "ADVR_V1\0" (8 bytes), the
 * runtime instance cookie (a GUID, 16 bytes), uint64 pid (as the runtime sees it), uint16
 * reserved; 34 bytes, then the connection takes one command like the runtime's own socket. */
#define PFC_DIAGIPC_ADVERTISE_LEN 34u
struct pfc_diagipc_advertise {
	uint8_t cookie[16];
	uint64_t pid;
};

/* Decode an advertise message from the len bytes read so far: 0 with a; -PFC_ERR_TRUNCATED
 * when fewer than PFC_DIAGIPC_ADVERTISE_LEN came; any other negative error (offset in e) when
 * the bytes are no advertise message: another magic, or a pid that no process has (0 or past
 * the kernel's PID_MAX_LIMIT).  Bytes after the message are not looked at. */
int pfc_diagipc_decode_advertise(const uint8_t *buf, size_t len, struct pfc_diagipc_advertise *a,
				 struct pfc_error *e);

/* The runtime provider (Microsoft-Windows-DotNETRuntime) keywords and level of an event
 * list "gc,exceptions,jit" (words: gc alloc jit exceptions loader threadpool contention,
 * or "none" alone).  0, or -1 with the first unknown word copied into bad[cap]. */
#define PFC_DIAGIPC_RUNTIME_PROVIDER "Microsoft-Windows-DotNETRuntime"
int pfc_diagipc_events_parse(const char *list, uint64_t *keywords, uint32_t *level, char *bad, size_t cap);

/* A name for a runtime HRESULT ("UNKNOWN_COMMAND"), NULL for one it does not know. */
const char *pfc_diagipc_hresult_name(uint32_t hr);

/* The innermost pid of a /proc/PID/status text's NStgid line (its last field: the pid in
 * the process's own pid namespace); 0 without one. */
long pfc_diagipc_status_nstgid(const char *status, size_t len);

/* The start time (field 22, clock ticks after boot) of a /proc/PID/stat text; 0 without one. */
uint64_t pfc_diagipc_stat_starttime(const char *stat, size_t len);

/* The value of NAME in a /proc/PID/environ block (NUL-separated NAME=VALUE), copied into
 * out[cap] (cut to fit); 1 when found, 0 when not. */
int pfc_diagipc_environ_get(const char *env, size_t len, const char *name, char *out, size_t cap);

/* A runtime's socket name "dotnet-diagnostic-PID-KEY-socket" for pid: 1 and *key (the
 * disambiguation key, the process's start time), else 0. */
int pfc_diagipc_socket_name(const char *name, long pid, uint64_t *key);

#endif
