/* Moved to sweep/sweep.h (issue 15). Kept while branches written against the old place are in
 * flight (issue 19's plan/); include "sweep/sweep.h". */
#include "sweep/sweep.h"
