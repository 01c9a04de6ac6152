/*
 * test_diagipc.c - converter/jit/diagipc.c: the EnablePerfMap and DisablePerfMap requests
 * byte for byte as dotnet/diagnostics' ipc-protocol.md lays them out, the reply decoder on
 * the replies a .NET 8 runtime (OK, S_OK) and a .NET 6/7 runtime (Error, UNKNOWN_COMMAND)
 * send, on every prefix of them, and on damaged ones (each with the offset of the bad
 * byte); the EventPipe session's CollectTracing2 and StopTracing requests, their session
 * reply (OK with a uint64 id, Error with an HRESULT) and the event list's keywords; the
 * NStgid, start-time, environment and socket-name parsers that find the socket; ResumeRuntime
 * and the advertise message of a runtime that connects to perfconv's port, its prefixes and
 * damaged copies.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "converter/jit/diagipc.h"
#include "tests/unit/check.h"

static const uint8_t magic[14] = "DOTNET_IPC_V1";

static size_t reply(uint8_t *b, uint16_t size, uint8_t set, uint8_t id, uint32_t hr)
{
	memcpy(b, magic, 14);
	b[14] = (uint8_t)size;
	b[15] = (uint8_t)(size >> 8);
	b[16] = set;
	b[17] = id;
	b[18] = b[19] = 0;
	b[20] = (uint8_t)hr;
	b[21] = (uint8_t)(hr >> 8);
	b[22] = (uint8_t)(hr >> 16);
	b[23] = (uint8_t)(hr >> 24);
	return 24;
}

static void test_requests(void)
{
	uint8_t b[PFC_DIAGIPC_REQUEST_MAX];
	static const uint8_t enable_all[24] = { 'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0,
						24, 0, 0x04, 0x05, 0, 0, 1, 0, 0, 0 };
	static const uint8_t disable[20] = { 'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0,
					     20, 0, 0x04, 0x06, 0, 0 };
	size_t n;

	n = pfc_diagipc_encode_perfmap(b, 1, PFC_PERFMAP_TYPE_ALL);
	check(n == 24 && !memcmp(b, enable_all, 24), "EnablePerfMap(ALL) is 24 bytes: magic, 24, 0x04 0x05, 0, uint32 1");
	n = pfc_diagipc_encode_perfmap(b, 1, PFC_PERFMAP_TYPE_PERFMAP);
	check(n == 24 && b[20] == 3 && !b[21] && !b[22] && !b[23], "EnablePerfMap(PERFMAP) carries 3");
	n = pfc_diagipc_encode_perfmap(b, 1, PFC_PERFMAP_TYPE_JITDUMP);
	check(n == 24 && b[20] == 2, "EnablePerfMap(JITDUMP) carries 2");
	n = pfc_diagipc_encode_perfmap(b, 0, PFC_PERFMAP_TYPE_ALL);
	check(n == 20 && !memcmp(b, disable, 20), "DisablePerfMap is a 20-byte header, 0x04 0x06, no payload");
}

static void test_replies(void)
{
	uint8_t b[2 * PFC_DIAGIPC_REPLY_MAX];
	struct pfc_diagipc_reply r;
	struct pfc_error e;
	size_t n, i, need;
	int ret, bad;

	/* .NET 8+: OK with S_OK */
	n = reply(b, 24, 0xff, 0x00, 0);
	memset(&e, 0, sizeof(e));
	ret = pfc_diagipc_decode_reply(b, n, &r, &need, &e);
	check(ret == 0 && r.ok && r.hresult == 0 && r.size == 24, "OK reply: ret %d ok %d hr %x", ret, r.ok, r.hresult);
	/* every prefix asks for more, and for the right amount */
	for (i = 0, bad = 0; i < n; i++) {
		ret = pfc_diagipc_decode_reply(b, i, &r, &need, &e);
		if (ret != -PFC_ERR_TRUNCATED || need != (i < 20 ? 20u : 24u))
			bad++;
	}
	check(!bad, "each prefix of a reply is TRUNCATED with the bytes still needed (%d wrong)", bad);
	/* .NET 6 and 7 answer an unknown Process command with Error, UNKNOWN_COMMAND */
	n = reply(b, 24, 0xff, 0xff, 0x80131385u);
	ret = pfc_diagipc_decode_reply(b, n, &r, NULL, &e);
	check(ret == 0 && !r.ok && r.hresult == PFC_DIAGIPC_E_UNKNOWN_COMMAND, "Error reply with UNKNOWN_COMMAND");
	check(!strcmp(pfc_diagipc_hresult_name(r.hresult), "UNKNOWN_COMMAND") &&
	      !strcmp(pfc_diagipc_hresult_name(0x80131384u), "BAD_ENCODING") && !pfc_diagipc_hresult_name(0x12345678u),
	      "HRESULT names");
	/* bytes after the reply are not read */
	n = reply(b, 24, 0xff, 0x00, 0);
	memset(b + n, 0xee, 8);
	ret = pfc_diagipc_decode_reply(b, n + 8, &r, NULL, &e);
	check(ret == 0 && r.hresult == 0, "trailing bytes after the reply are left alone");
	/* a longer payload (a future runtime): the HRESULT is its first 4 bytes */
	n = reply(b, 32, 0xff, 0x00, 0);
	memset(b + 24, 0, 8);
	ret = pfc_diagipc_decode_reply(b, 24, &r, &need, &e);
	check(ret == -PFC_ERR_TRUNCATED && need == 32, "a 32-byte reply needs its 32 bytes");
	ret = pfc_diagipc_decode_reply(b, 32, &r, NULL, &e);
	check(ret == 0 && r.size == 32, "a 32-byte reply decodes");

	/* damaged replies: the offset of the bad byte */
	struct { const char *what; int at; uint8_t v; uint64_t off; size_t len; } dmg[] = {
		{ "bad magic", 3, 'x', 3, 24 },
		{ "bad magic, read so far", 0, 'H', 0, 5 },
		{ "magic without its NUL", 13, '2', 13, 24 },
		{ "size below the header", 14, 19, 14, 24 },
		{ "size without room for the HRESULT", 14, 22, 14, 24 },
		{ "size past the limit", 15, 0x10, 14, 24 },
		{ "command set of a request", 16, 0x04, 16, 24 },
		{ "command id neither OK nor Error", 17, 0x01, 17, 24 },
	};
	for (i = 0; i < sizeof(dmg) / sizeof(dmg[0]); i++) {
		reply(b, 24, 0xff, 0x00, 0);
		b[dmg[i].at] = dmg[i].v;
		memset(&e, 0, sizeof(e));
		ret = pfc_diagipc_decode_reply(b, dmg[i].len, &r, NULL, &e);
		check(ret == -PFC_ERR_CORRUPT && e.has_offset && e.offset == dmg[i].off && e.detail[0],
		      "%s: ret %d offset %llu (want %llu): %s", dmg[i].what, ret, (unsigned long long)e.offset,
		      (unsigned long long)dmg[i].off, e.detail);
	}
	memset(&e, 0, sizeof(e));
	check(pfc_diagipc_decode_reply(b, 0, &r, &need, &e) == -PFC_ERR_TRUNCATED && need == 20, "nothing read yet");
}

static void test_proc_texts(void)
{
	static const char status[] = "Name:\tProbeApi\nTgid:\t4242\nNgid:\t0\nPid:\t4242\nNStgid:\t4242\t17\t1\nNSpid:\t4242\t17\t1\n";
	static const char flat[] = "Name:\tsleep\nNStgid:\t999\n";
	static const char broken[] = "NStgid:\t12x\n";
	static const char stat[] = "4242 (a) b) S ) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 12 0 987654 12345 678\n";
	static const char env[] = "PATH=/usr/bin\0TMPDIRX=no\0TMPDIR=/var/tmp/app\0DOTNET_EnableDiagnostics=0";
	char v[8];
	uint64_t key = 0;

	check(pfc_diagipc_status_nstgid(status, sizeof(status) - 1) == 1, "NStgid: the innermost of three levels");
	check(pfc_diagipc_status_nstgid(flat, sizeof(flat) - 1) == 999, "NStgid: one level");
	check(pfc_diagipc_status_nstgid(broken, sizeof(broken) - 1) == 0, "NStgid: not a number");
	check(pfc_diagipc_status_nstgid("Name:\tx\n", 8) == 0, "no NStgid line (kernel before 4.1)");
	check(pfc_diagipc_stat_starttime(stat, sizeof(stat) - 1) == 987654, "start time after a comm with ') ' in it: %llu",
	      (unsigned long long)pfc_diagipc_stat_starttime(stat, sizeof(stat) - 1));
	check(pfc_diagipc_stat_starttime("1 (x) S 1 2", 11) == 0, "a stat line cut short");
	check(pfc_diagipc_environ_get(env, sizeof(env) - 1, "TMPDIR", v, sizeof(v)) && !strcmp(v, "/var/tm"),
	      "environ: TMPDIR, not TMPDIRX, cut to the buffer: '%s'", v);
	check(pfc_diagipc_environ_get(env, sizeof(env) - 1, "DOTNET_EnableDiagnostics", v, sizeof(v)) && !strcmp(v, "0"),
	      "environ: the last entry has no NUL");
	check(!pfc_diagipc_environ_get(env, sizeof(env) - 1, "HOME", v, sizeof(v)), "environ: a name not there");
	check(pfc_diagipc_socket_name("dotnet-diagnostic-1-3361-socket", 1, &key) && key == 3361, "socket name, pid 1");
	check(!pfc_diagipc_socket_name("dotnet-diagnostic-12-3361-socket", 1, &key), "another pid's socket");
	check(!pfc_diagipc_socket_name("dotnet-diagnostic-1-3361-socketx", 1, &key), "not the ending");
	check(!pfc_diagipc_socket_name("dotnet-diagnostic-1--socket", 1, &key), "no key");
	check(!pfc_diagipc_socket_name("perf-1.map", 1, &key), "another file");
}

static void test_session(void)
{
	static uint8_t b[512];
	struct pfc_diagipc_provider p[2] = { { 0x8011, 4, "Microsoft-Windows-DotNETRuntime", NULL },
					     { 0x1, 5, "AB", "k=v" } };
	struct pfc_diagipc_reply r;
	struct pfc_error e;
	uint64_t kw;
	uint32_t level;
	char bad[32];
	size_t n, i, need;
	int ret, wrong;

	/* header, u32 buffer MB, u32 format 1, bool rundown, u32 2 providers, then each: u64
	 * keywords, u32 level, the name (u32 units with the NUL, UTF-16LE), the args */
	n = pfc_diagipc_encode_collect(b, sizeof(b), 256, 1, p, 2);
	check(n == 20 + 13 + (12 + 4 + 64 + 4) + (12 + 4 + 6 + 4 + 8), "CollectTracing2 of two providers is %zu bytes", n);
	check(b[14] == (uint8_t)n && b[15] == (uint8_t)(n >> 8) && b[16] == 0x02 && b[17] == 0x03,
	      "CollectTracing2: its size, command set 0x02, id 0x03");
	check(b[20] == 0 && b[21] == 1 && b[24] == 1 && b[28] == 1 && b[29] == 2, "256 MB, nettrace, rundown, 2 providers");
	check(b[33] == 0x11 && b[34] == 0x80 && b[41] == 4 && b[45] == 32 && b[49] == 'M' && b[50] == 0 &&
	      b[49 + 62] == 0 && b[49 + 63] == 0, "provider 1: keywords, level, 32 units with the NUL");
	check(b[113] == 0 && b[114] == 0 && b[115] == 0 && b[116] == 0, "no arguments: length 0");
	check(b[129] == 3 && b[133] == 'A' && b[135] == 'B' && b[139] == 4 && b[143] == 'k', "provider 2's name and args");
	for (i = 0, wrong = 0; i < n; i++)
		if (pfc_diagipc_encode_collect(b, i, 256, 1, p, 2) != 0)
			wrong++;
	check(!wrong, "a buffer one byte short is refused (%d accepted)", wrong);
	p[1].name = "\xc3\xa9";
	check(pfc_diagipc_encode_collect(b, sizeof(b), 256, 1, p, 2) == 0, "a name that is not ASCII is refused");

	n = pfc_diagipc_encode_stop(b, 0x1122334455667788ull);
	check(n == 28 && b[14] == 28 && b[16] == 0x02 && b[17] == 0x01 && b[20] == 0x88 && b[27] == 0x11,
	      "StopTracing: 28 bytes, 0x02 0x01, the session id");

	/* OK with the session id, as CollectTracing2's and StopTracing's replies carry */
	memcpy(b, "DOTNET_IPC_V1", 14);
	b[14] = 28, b[15] = 0, b[16] = 0xff, b[17] = 0, b[18] = b[19] = 0;
	for (i = 0; i < 8; i++)
		b[20 + i] = (uint8_t)(0x10 + i);
	memcpy(b + 28, "Nettrace", 8);  /* the stream after it is not the reply's */
	memset(&e, 0, sizeof(e));
	ret = pfc_diagipc_decode_session_reply(b, 36, &r, &need, &e);
	check(ret == 0 && r.ok && r.session == 0x1716151413121110ull && need == 28, "session reply: id %llx need %zu",
	      (unsigned long long)r.session, need);
	for (i = 0, wrong = 0; i < 28; i++)
		if (pfc_diagipc_decode_session_reply(b, i, &r, &need, &e) != -PFC_ERR_TRUNCATED ||
		    need != (i < 20 ? 20u : 28u))
			wrong++;
	check(!wrong, "each prefix of a session reply asks for the rest (%d wrong)", wrong);
	b[14] = 24;
	ret = pfc_diagipc_decode_session_reply(b, 36, &r, &need, &e);
	check(ret == -PFC_ERR_CORRUPT && e.offset == 14, "an OK of 24 bytes has no room for a session id");
	b[17] = 0xff;
	b[20] = 0x15, b[21] = 0x15, b[22] = 0x13, b[23] = 0x80;
	ret = pfc_diagipc_decode_session_reply(b, 24, &r, &need, &e);
	check(ret == 0 && !r.ok && r.hresult == PFC_DIAGIPC_E_NOTSUPPORTED, "an Error of a session carries an HRESULT");

	check(pfc_diagipc_events_parse("gc,exceptions,jit", &kw, &level, bad, sizeof(bad)) == 0 && kw == 0x8011 &&
	      level == 4, "gc,exceptions,jit: keywords %llx level %u", (unsigned long long)kw, level);
	check(pfc_diagipc_events_parse("alloc", &kw, &level, bad, sizeof(bad)) == 0 && kw == 1 && level == 5,
	      "alloc is GC at the verbose level");
	check(pfc_diagipc_events_parse("none", &kw, &level, bad, sizeof(bad)) == 0 && kw == 0, "none");
	check(pfc_diagipc_events_parse("gc,disk", &kw, &level, bad, sizeof(bad)) == -1 && !strcmp(bad, "disk"),
	      "an unknown word is named");
	check(pfc_diagipc_events_parse("gc,", &kw, &level, bad, sizeof(bad)) == -1 && !strcmp(bad, ""),
	      "an empty word is refused");
}

static void test_advertise(void)
{
	/* as ipc-protocol.md's example lays it out: magic, cookie, pid 12345, 0 */
	static const uint8_t adv[34] = { 'A', 'D', 'V', 'R', '_', 'V', '1', 0,
					 0x67, 0x45, 0x3e, 0x12, 0x9b, 0xe8, 0xd3, 0x12, 0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00,
					 0x39, 0x30, 0, 0, 0, 0, 0, 0, 0, 0 };
	static const uint8_t resume[20] = { 'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0,
					    20, 0, 0x04, 0x01, 0, 0 };
	uint8_t b[40];
	struct pfc_diagipc_advertise a;
	struct pfc_error e;
	size_t i;
	int ret, wrong;

	check(pfc_diagipc_encode_resume(b) == 20 && !memcmp(b, resume, 20), "ResumeRuntime: a 20-byte header, 0x04 0x01");
	memset(&e, 0, sizeof(e));
	memcpy(b, adv, 34);
	b[34] = 'D';	/* the next bytes are not the message's */
	ret = pfc_diagipc_decode_advertise(b, 35, &a, &e);
	check(ret == 0 && a.pid == 12345 && a.cookie[0] == 0x67 && a.cookie[15] == 0x00, "advertise: pid %llu",
	      (unsigned long long)a.pid);
	for (i = 0, wrong = 0; i < 34; i++)
		if (pfc_diagipc_decode_advertise(b, i, &a, &e) != -PFC_ERR_TRUNCATED)
			wrong++;
	check(!wrong, "each prefix of an advertise message asks for the rest (%d wrong)", wrong);
	b[3] = 'X';
	ret = pfc_diagipc_decode_advertise(b, 5, &a, &e);
	check(ret == -PFC_ERR_CORRUPT && e.offset == 3, "another magic is told at its first wrong byte");
	memcpy(b, "DOTNET_IPC_V1", 14);
	memset(&e, 0, sizeof(e));
	ret = pfc_diagipc_decode_advertise(b, 34, &a, &e);
	check(ret == -PFC_ERR_CORRUPT && e.offset == 0, "an IPC message is no advertise message");
	memcpy(b, adv, 34);
	memset(b + 24, 0, 8);
	memset(&e, 0, sizeof(e));
	ret = pfc_diagipc_decode_advertise(b, 34, &a, &e);
	check(ret == -PFC_ERR_CORRUPT && e.offset == 24, "pid 0 is no process's");
	b[31] = 0x80;
	memset(&e, 0, sizeof(e));
	ret = pfc_diagipc_decode_advertise(b, 34, &a, &e);
	check(ret == -PFC_ERR_CORRUPT && e.offset == 24, "a pid past 2^22 is no process's");
}

int main(void)
{
	test_advertise();
	test_session();
	test_requests();
	test_replies();
	test_proc_texts();
	return check_done("test_diagipc");
}
