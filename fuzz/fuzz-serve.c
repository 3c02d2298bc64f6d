/* Fuzz target for serve/'s parsers: request traces (k3sim JSONL and CSV, Mooncake JSONL, Azure
 * CSV; serve/trace.c) and the scenario's serve: section (serve/config.c). Any input must give 0 or
 * a clean error with a location, never a crash, a leak or undefined behaviour. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	struct err e;
	struct serve_workload w;
	for (int f = 0; f < SERVE_TRACE_FORMAT_COUNT; f++)
		if (serve_trace_parse(&w, "fuzz.trace", text, size, (enum serve_trace_format)f, 1.0, &e) == 0) {
			/* every request is usable: lengths, ids within the storage */
			for (int64_t i = 0; i < w.n; i++)
				if (w.req[i].n_ids && (w.req[i].ids < w.ids || w.req[i].ids + w.req[i].n_ids > w.ids + w.n_ids))
					abort();
			serve_workload_release(&w);
		}
	struct scenario s;
	struct serve_config c;
	if (scenario_load_yaml(&s, "fuzz.yaml", text, size, &e) == 0 &&
	    serve_config_load_yaml(&c, &s, "fuzz.yaml", text, size, &e) == 0 && c.arrival != SERVE_ARRIVAL_TRACE) {
		/* a bounded workload from it */
		if (c.max_requests == 0 || c.max_requests > 200)
			c.max_requests = 200;
		struct model m;
		memset(&m, 0, sizeof m);
		if (serve_workload_make(&w, &c, &m, &e) == 0)
			serve_workload_release(&w);
	}
	free(text);
	return 0;
}
