/* Replays inputs through a fuzz target when the compiler has no libFuzzer (gcc): each argument is
 * a file, or a directory of files. `meson test --suite fuzz` replays the seed corpus this way. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "%s: cannot open\n", path);
		return 1;
	}
	size_t cap = 1 << 20, len = 0;
	uint8_t *buf = malloc(cap);
	if (!buf) {
		fclose(f);
		return 1;
	}
	size_t got;
	while ((got = fread(buf + len, 1, cap - len, f)) > 0) {
		len += got;
		if (len == cap) {
			uint8_t *nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int failed = 0, runs = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			DIR *d = opendir(argv[i]);
			struct dirent *de;
			while (d && (de = readdir(d))) {
				if (de->d_name[0] == '.')
					continue;
				char path[4096];
				snprintf(path, sizeof path, "%s/%s", argv[i], de->d_name);
				failed |= run_file(path);
				runs++;
			}
			if (d)
				closedir(d);
		} else {
			failed |= run_file(argv[i]);
			runs++;
		}
	}
	printf("replayed %d inputs\n", runs);
	return failed;
}
