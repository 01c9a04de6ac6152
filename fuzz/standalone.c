/*
 * standalone.c - a main() for the fuzz targets without libFuzzer: runs the target once on
 * each file named on the command line.  `make check` builds every fuzz/fuzz_NAME.c with it
 * (also under the sanitizers of `make asan`) so that tests/fuzz.sh replays tests/regress/
 * on any compiler; `make fuzz` links the same targets with clang's libFuzzer instead.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		uint8_t *buf = NULL;
		size_t len = 0, cap = 0, n;

		if (!f) {
			perror(argv[i]);
			return 2;
		}
		for (;;) {
			if (len == cap) {
				uint8_t *nb = realloc(buf, cap = cap ? cap * 2 : 65536);
				if (!nb)
					return 2;
				buf = nb;
			}
			n = fread(buf + len, 1, cap - len, f);
			if (!n)
				break;
			len += n;
		}
		fclose(f);
		LLVMFuzzerTestOneInput(buf, len);
		free(buf);
	}
	return 0;
}
