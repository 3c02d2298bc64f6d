#include "util/tracejson.h"
#include "util/jsonw.h"

#include <errno.h>
#include <inttypes.h>

void tj_begin(struct tj *w, FILE *out)
{
	w->out = out;
	w->first = true;
	w->events = 0;
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"k3sim\"},\"traceEvents\":[", out);
}

void tj_begin_base(struct tj *w, FILE *out, int64_t base_ns)
{
	w->out = out;
	w->first = true;
	w->events = 0;
	fprintf(out,
		"{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"k3sim\"},"
		"\"baseTimeNanoseconds\":%" PRId64 ",\"traceEvents\":[",
		base_ns);
}

void tj_event(struct tj *w)
{
	fputs(w->first ? "\n" : ",\n", w->out);
	w->first = false;
	w->events++;
}

void tj_us(FILE *f, int64_t ns)
{
	uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	if (ns < 0)
		fputc('-', f);
	fprintf(f, "%" PRIu64 ".%03" PRIu64, mag / 1000, mag % 1000);
}

void tj_meta(struct tj *w, const char *what, int64_t pid, int64_t tid, bool has_tid, const char *name)
{
	tj_event(w);
	fprintf(w->out, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRId64, what, pid);
	if (has_tid)
		fprintf(w->out, ",\"tid\":%" PRId64, tid);
	fputs(",\"args\":{\"name\":", w->out);
	util_json_str(w->out, name);
	fputs("}}", w->out);
}

void tj_sort_index(struct tj *w, int64_t pid, int64_t index)
{
	tj_event(w);
	fprintf(w->out,
		"{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%" PRId64 ",\"args\":{\"sort_index\":%" PRId64 "}}",
		pid, index);
}

int tj_end(struct tj *w)
{
	fputs("\n]}\n", w->out);
	return fflush(w->out) != 0 || ferror(w->out) ? -EIO : 0;
}
