#include "reports/timeline.h"

#include <inttypes.h>
#include <math.h>

#include "util/tracejson.h"
#include "util/jsonw.h"

#define GPU_PID_BASE 1000000000 /* as trace/analyze/export.c: GPU "processes" above real pids */
#define STEP_PID 1

static int64_t ns(double s)
{
	return (int64_t)llround(s * 1e9);
}

int report_timeline_json(const struct timeline *tl, const struct timeline_report *r, FILE *out)
{
	struct tj w;
	tj_begin(&w, out);
	const struct sim_step_timing *t = r->timing;
	tj_meta(&w, "process_name", STEP_PID, 0, false, "k3sim step (simulated)");
	tj_sort_index(&w, STEP_PID, 0);
	tj_meta(&w, "thread_name", STEP_PID, 0, true, "step");
	for (int g = 0; g < tl->n_gpus; g++) {
		char name[128];
		snprintf(name, sizeof name, "%s", r->gpu_names[g] ? r->gpu_names[g] : "");
		if (!r->gpu_names[g])
			snprintf(name, sizeof name, "GPU %d", g);
		tj_meta(&w, "process_name", GPU_PID_BASE + g, 0, false, name);
		tj_sort_index(&w, GPU_PID_BASE + g, g + 1);
	}
	for (int i = 0; i < tl->n_streams; i++)
		tj_meta(&w, "thread_name", GPU_PID_BASE + tl->streams[i].gpu, i, true, tl->streams[i].name);

	tj_event(&w);
	fputs("{\"ph\":\"X\",\"cat\":\"step\",\"name\":", out);
	util_json_str(out, r->title ? r->title : "step");
	fprintf(out, ",\"pid\":%d,\"tid\":0,\"ts\":0.000,\"dur\":", STEP_PID);
	tj_us(out, ns(t ? t->time_s : tl->result.makespan_s));
	if (t)
		fprintf(out,
			",\"args\":{\"overlap\":\"%s\",\"microbatches\":%d,\"comm SMs reserved\":%d,\"step us\":%.3f,"
			"\"ops in sequence us\":%.3f,"
			"\"critical path compute us\":%.3f,\"critical path comm us\":%.3f,\"exposed comm us\":%.3f}",
			scenario_overlap_name(t->overlap), t->microbatches, t->comm_sms_reserved, t->time_s * 1e6, t->ops_s * 1e6,
			t->critical_compute_s * 1e6, t->critical_comm_s * 1e6, t->exposed_comm_s * 1e6);
	fputs("}", out);

	for (int32_t i = 0; i < tl->n_events; i++) {
		const struct tl_event *e = &tl->ev[i];
		const struct tl_stream *s = &tl->streams[e->stream];
		tj_event(&w);
		fputs("{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":", out);
		util_json_str(out, e->name);
		fprintf(out, ",\"pid\":%d,\"tid\":%d,\"ts\":", GPU_PID_BASE + s->gpu, (int)e->stream);
		tj_us(out, ns(e->start_s));
		fputs(",\"dur\":", out);
		tj_us(out, ns(e->end_s) - ns(e->start_s));
		fprintf(out,
			",\"args\":{\"device\":%d,\"stream\":%d,\"layer\":%d,\"microbatch\":%d,\"communication\":%s,"
			"\"critical\":%s,\"alone us\":%.3f,\"held SMs from us\":%.3f}}",
			s->gpu, (int)e->stream, (int)e->layer, (int)e->mb, e->kind == TL_COMM ? "true" : "false",
			e->critical ? "true" : "false", e->work_s * 1e6, e->admit_s * 1e6);
	}
	return tj_end(&w);
}
