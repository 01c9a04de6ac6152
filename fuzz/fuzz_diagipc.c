/*
 * fuzz_diagipc.c - the decoder of a .NET diagnostics IPC reply (converter/jit/diagipc.c),
 * which reads whatever listens on a socket named like the runtime's.  Each input is decoded
 * whole and as every prefix the socket code could have read so far: a prefix must ask for
 * more or fail, never decode to a reply the whole input does not give, and an accepted reply
 * must lie inside the bytes.  The same for the session reply of CollectTracing2 and
 * StopTracing (perfconv record), whose OK carries a session id and is followed by the
 * stream.  And the advertise message a runtime sends first on each connection to perfconv
 * record's diagnostic port: the same rules for its prefixes, and an accepted one names a pid
 * a process can have.  Replies are at most 256 bytes; inputs are capped at 512.
 */
// FUZZ_MAX_LEN: 512
// FUZZ_SEEDS: fuzz/seeds/diagipc/*
#include "converter/jit/diagipc.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pfc_diagipc_reply whole, part;
	struct pfc_diagipc_advertise adv, adv_part;
	struct pfc_error e;
	size_t i, need = 0;
	int ret, r;
	uint64_t key;
	char name[64], out[32];

	memset(&e, 0, sizeof(e));
	ret = pfc_diagipc_decode_reply(data, size, &whole, &need, &e);
	if (ret == 0 && (whole.size < PFC_DIAGIPC_HEADER_LEN + 4 || whole.size > size ||
			 whole.size > PFC_DIAGIPC_REPLY_MAX || whole.command_set != PFC_DIAGIPC_SET_SERVER))
		abort();
	if (ret == -PFC_ERR_TRUNCATED && need <= size)
		abort();
	if (ret < 0 && ret != -PFC_ERR_TRUNCATED && (!e.has_offset || e.offset >= size))
		abort();
	for (i = 0; i < size && i <= PFC_DIAGIPC_REPLY_MAX; i++) {
		memset(&e, 0, sizeof(e));
		r = pfc_diagipc_decode_reply(data, i, &part, &need, &e);
		/* a prefix that decodes is the same reply the whole input gives */
		if (r == 0 && (ret != 0 || part.hresult != whole.hresult || part.ok != whole.ok))
			abort();
		/* a prefix found malformed stays malformed */
		if (r < 0 && r != -PFC_ERR_TRUNCATED && ret != r)
			abort();
	}
	/* the session reply: an OK holds 8 bytes of id, and the bytes after it are the stream's */
	memset(&e, 0, sizeof(e));
	ret = pfc_diagipc_decode_session_reply(data, size, &whole, &need, &e);
	if (ret == 0 && (whole.size > size || whole.size > PFC_DIAGIPC_REPLY_MAX || need != whole.size ||
			 whole.size < PFC_DIAGIPC_HEADER_LEN + (whole.ok ? 8 : 4)))
		abort();
	if (ret == -PFC_ERR_TRUNCATED && need <= size)
		abort();
	if (ret < 0 && ret != -PFC_ERR_TRUNCATED && (!e.has_offset || e.offset >= size))
		abort();
	for (i = 0; i < size && i <= PFC_DIAGIPC_REPLY_MAX; i++) {
		memset(&e, 0, sizeof(e));
		r = pfc_diagipc_decode_session_reply(data, i, &part, &need, &e);
		if (r == 0 && (ret != 0 || part.session != whole.session || part.hresult != whole.hresult))
			abort();
		if (r < 0 && r != -PFC_ERR_TRUNCATED && ret != r)
			abort();
	}
	/* the advertise message: 34 bytes, whatever follows is the next message's */
	memset(&e, 0, sizeof(e));
	ret = pfc_diagipc_decode_advertise(data, size, &adv, &e);
	if (ret == 0 && (size < PFC_DIAGIPC_ADVERTISE_LEN || adv.pid == 0 || adv.pid > 4194304))
		abort();
	if (ret == -PFC_ERR_TRUNCATED && size >= PFC_DIAGIPC_ADVERTISE_LEN)
		abort();
	if (ret < 0 && ret != -PFC_ERR_TRUNCATED && (!e.has_offset || e.offset >= size))
		abort();
	for (i = 0; i <= size && i <= PFC_DIAGIPC_ADVERTISE_LEN; i++) {
		memset(&e, 0, sizeof(e));
		r = pfc_diagipc_decode_advertise(data, i, &adv_part, &e);
		if (r == 0 && (ret != 0 || adv_part.pid != adv.pid || memcmp(adv_part.cookie, adv.cookie, 16)))
			abort();
		if (r < 0 && r != -PFC_ERR_TRUNCATED && ret != r)
			abort();
		if (r == -PFC_ERR_TRUNCATED && i >= PFC_DIAGIPC_ADVERTISE_LEN)
			abort();
	}
	/* the text parsers of the same module, on the same bytes */
	pfc_diagipc_status_nstgid((const char *)data, size);
	pfc_diagipc_stat_starttime((const char *)data, size);
	pfc_diagipc_environ_get((const char *)data, size, "TMPDIR", out, sizeof(out));
	if (size < sizeof(name)) {
		memcpy(name, data, size);
		name[size] = 0;
		pfc_diagipc_socket_name(name, 1, &key);
	}
	pfc_diagipc_hresult_name(whole.hresult);
	return 0;
}
