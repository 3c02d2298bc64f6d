-- Mean NVML power and SM clock over each op's kernels in a k3sim capture (the bench's op ranges run
-- back to back, so an op with >= 3 readings shows its own draw): sqlite3 -column DB < power-by-op.sql
-- (DB decompressed: xz -dk k3-h200.db.xz). Columns: the op, its ranges, the span from its first
-- kernel to its last (ms), its kernels' busy time (ms), the readings inside, mean W, mean MHz.
WITH k AS (
  SELECT min(k.start) s, max(k.end) e, n.text t
  FROM NVTX_EVENTS n
  JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.start BETWEEN n.start AND n.end
  JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.correlationId = r.correlationId
  WHERE n.text LIKE 'k3sim op=%' GROUP BY n.start),
w AS (SELECT t, min(s) s, max(e) e, count(*) c, sum(e - s) busy FROM k GROUP BY t)
SELECT substr(w.t, 10, 72) op, w.c ranges, round((w.e - w.s) / 1e6, 1) span_ms, round(w.busy / 1e6, 1) busy_ms,
       count(g.timestamp) readings, round(avg(g.powerW)) watts, round(avg(g.smClockMHz)) mhz
FROM w LEFT JOIN K3SIM_GPU_METRICS g ON g.timestamp BETWEEN w.s AND w.e
GROUP BY w.t HAVING readings >= 3 ORDER BY busy_ms DESC;
