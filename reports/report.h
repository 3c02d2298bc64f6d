#ifndef K3_REPORTS_REPORT_H
#define K3_REPORTS_REPORT_H

/* The comparison report: DIR/report.md, DIR/report.html (self-contained: charts inlined as SVG
 * data URIs, styles inline), DIR/results.json, DIR/results.db and DIR/charts/ (gnuplot's SVG and
 * PNG files with their data and script).
 *
 * Files are written atomically (util/outfile.h). DIR counts as k3sim's own when this run created
 * it, when it was empty, or when it holds the .k3sim-report mark the last report left: then the
 * report's files are replaced; elsewhere an existing file with a report file's name takes
 * opts.force. Files with other names are never touched; gnuplot's images are atomic outputs too.
 *
 * Every number in the report's tables comes from one table model rendered twice (Markdown and
 * HTML) and stored in results.json under "tables", each cell with its raw value and, where it is
 * a point's output, the point and column it comes from (so a test can check the Markdown against
 * the JSON and the SQLite results). In the Markdown, a table follows a `<!-- table: ID -->` line. */

#include <stdbool.h>
#include <stddef.h>

#include "reports/chart.h"
#include "reports/compare.h"
#include "util/err.h"

struct report_opts {
	const char *dir;     /* created when missing (util/outfile.h: outfile_dir_open) */
	bool force;          /* replace existing files even where the directory is not k3sim's */
	const char *const *inputs; /* files the report was made from: never overwritten */
	size_t n_inputs;
	const char *gnuplot; /* program to run; NULL or "": no charts (the report says so) */
	const char *version; /* k3sim version for the report's footer */
	const char *command; /* the command line that made it, for the footer */
};

struct report_files {
	char md[600], html[600], json[600], db[600], charts_dir[600];
	int n_charts; /* charts (each an SVG and a PNG) */
	struct chart_outcome charts;
};

int report_write(const struct compare *c, const struct report_opts *o, struct report_files *out,
                 struct err *e);

#endif
