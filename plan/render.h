#ifndef K3_PLAN_RENDER_H
#define K3_PLAN_RENDER_H

/* What `k3sim plan` writes besides its table and JSON: the report (plan.md with gnuplot charts of
 * the Pareto fronts, through reports/chart.h) and a recommendation as a ready scenario YAML. This
 * file is the plan's rendering layer (k3plan_render links reports/); plan/plan.h computes. */

#include <stdio.h>

#include "plan/plan.h"
#include "reports/chart.h"
#include "util/outfile.h"

/* The deployment of rec as a scenario with a serve: section at the served rate (the first pass's
 * where it was not served) times its replicas. -EINVAL when rec found nothing. */
int plan_write_yaml(FILE *f, const struct plan_spec *sp, const struct plan_result *r, const struct plan_rec *rec,
		    struct err *e);

/* dir/plan.md and dir/front-tpot.{svg,png}, dir/front-ttft.{svg,png} (dir must exist; files by
 * oo's rules). co says whether gnuplot drew the charts. */
int plan_report(const char *dir, const char *gnuplot, const struct plan_spec *sp, const struct plan_result *r,
		const struct outfile_opts *oo, struct chart_outcome *co, struct err *e);

#endif
