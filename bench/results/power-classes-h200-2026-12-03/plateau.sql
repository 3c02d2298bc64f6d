-- each op's NVTX ranges (back to back): its span, busy time, and the readings in its last 300 ms
WITH k AS (
  SELECT min(k.start) s, max(k.end) e, n.text t, sum(k.end - k.start) busy
  FROM NVTX_EVENTS n
  JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.start BETWEEN n.start AND n.end
  JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.correlationId = r.correlationId
  WHERE n.text LIKE 'k3sim op=%' GROUP BY n.start),
w AS (SELECT t, min(s) s, max(e) e, count(*) c, sum(busy) busy FROM k GROUP BY t)
SELECT substr(w.t, 10, 70) op, round((w.e - w.s) / 1e6) span_ms, round(w.busy / 1e6) busy_ms,
       count(g.timestamp) n_last, round(avg(g.powerW)) w_last, round(avg(g.smClockMHz)) mhz_last
FROM w LEFT JOIN K3SIM_GPU_METRICS g ON g.timestamp BETWEEN w.e - 300000000 AND w.e
WHERE (w.e - w.s) > 700e6 GROUP BY w.t ORDER BY span_ms DESC;
