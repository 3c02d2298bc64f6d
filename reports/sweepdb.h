/* Moved to sweep/sweepdb.h (issue 15). Kept while branches written against the old place are in
 * flight (issue 19's plan/); include "sweep/sweepdb.h". */
#include "sweep/sweepdb.h"
