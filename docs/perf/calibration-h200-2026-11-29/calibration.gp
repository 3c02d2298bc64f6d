# gnuplot calibration.gp  (k3sim trace validate)
set terminal pngcairo size 1100,780 background rgb 'white' font 'DejaVu Sans,11'
set termoption noenhanced
set key top left
set grid
set output 'docs/perf/calibration-h200-2026-11-29/calibration-scatter.png'
set logscale xy
set format x '1e%L'
set format y '1e%L'
set xlabel 'measured (s)'
set ylabel 'predicted (s)'
set title 'predicted vs measured (h200; filled: held out, open: training)'
plot x title 'exact' lw 1 lc rgb '#888888', 1.15*x title '+-15%' dt 2 lc rgb '#bbbbbb', x/1.15 notitle dt 2 lc rgb '#bbbbbb', 'docs/perf/calibration-h200-2026-11-29/calibration.dat' index 0 using 1:($5 > 0 ? $2 : 1/0) with points pt 7 ps 0.6 lc 1 title 'copy', '' index 0 using 1:($5 > 0 ? 1/0 : $2) with points pt 6 ps 0.6 lc 1 notitle, 'docs/perf/calibration-h200-2026-11-29/calibration.dat' index 1 using 1:($5 > 0 ? $2 : 1/0) with points pt 7 ps 0.6 lc 2 title 'gemm.bf16', '' index 1 using 1:($5 > 0 ? 1/0 : $2) with points pt 6 ps 0.6 lc 2 notitle, 'docs/perf/calibration-h200-2026-11-29/calibration.dat' index 2 using 1:($5 > 0 ? $2 : 1/0) with points pt 7 ps 0.6 lc 3 title 'gemm.fp8', '' index 2 using 1:($5 > 0 ? 1/0 : $2) with points pt 6 ps 0.6 lc 3 notitle, 'docs/perf/calibration-h200-2026-11-29/calibration.dat' index 3 using 1:($5 > 0 ? $2 : 1/0) with points pt 7 ps 0.6 lc 4 title 'kda_decode.fp32', '' index 3 using 1:($5 > 0 ? 1/0 : $2) with points pt 6 ps 0.6 lc 4 notitle, 'docs/perf/calibration-h200-2026-11-29/calibration.dat' index 4 using 1:($5 > 0 ? $2 : 1/0) with points pt 7 ps 0.6 lc 5 title 'kda_decode.bf16', '' index 4 using 1:($5 > 0 ? 1/0 : $2) with points pt 6 ps 0.6 lc 5 notitle, 'docs/perf/calibration-h200-2026-11-29/calibration.dat' index 5 using 1:($5 > 0 ? $2 : 1/0) with points pt 7 ps 0.6 lc 6 title 'kda_chunk.fp32', '' index 5 using 1:($5 > 0 ? 1/0 : $2) with points pt 6 ps 0.6 lc 6 notitle, 'docs/perf/calibration-h200-2026-11-29/calibration.dat' index 6 using 1:($5 > 0 ? $2 : 1/0) with points pt 7 ps 0.6 lc 7 title 'kda_chunk.bf16', '' index 6 using 1:($5 > 0 ? 1/0 : $2) with points pt 6 ps 0.6 lc 7 notitle
set output 'docs/perf/calibration-h200-2026-11-29/calibration-error.png'
unset logscale y
set format y '%g'
set logscale x
set xlabel 'size (GEMMs, attention, KDA prefill: FLOPs; copies, KDA decode, collectives: bytes)'
set ylabel 'error (%)'
set title 'error vs size (h200; filled: held out, open: training)'
plot 0 notitle lc rgb '#888888', 5 title '+-5%' dt 2 lc rgb '#bbbbbb', -5 notitle dt 2 lc rgb '#bbbbbb', 'docs/perf/calibration-h200-2026-11-29/calibration.dat' index 0 using 3:($5 > 0 ? $4 : 1/0) with points pt 7 ps 0.6 lc 1 title 'copy', '' index 0 using 3:($5 > 0 ? 1/0 : $4) with points pt 6 ps 0.6 lc 1 notitle, 'docs/perf/calibration-h200-2026-11-29/calibration.dat' index 1 using 3:($5 > 0 ? $4 : 1/0) with points pt 7 ps 0.6 lc 2 title 'gemm.bf16', '' index 1 using 3:($5 > 0 ? 1/0 : $4) with points pt 6 ps 0.6 lc 2 notitle, 'docs/perf/calibration-h200-2026-11-29/calibration.dat' index 2 using 3:($5 > 0 ? $4 : 1/0) with points pt 7 ps 0.6 lc 3 title 'gemm.fp8', '' index 2 using 3:($5 > 0 ? 1/0 : $4) with points pt 6 ps 0.6 lc 3 notitle, 'docs/perf/calibration-h200-2026-11-29/calibration.dat' index 3 using 3:($5 > 0 ? $4 : 1/0) with points pt 7 ps 0.6 lc 4 title 'kda_decode.fp32', '' index 3 using 3:($5 > 0 ? 1/0 : $4) with points pt 6 ps 0.6 lc 4 notitle, 'docs/perf/calibration-h200-2026-11-29/calibration.dat' index 4 using 3:($5 > 0 ? $4 : 1/0) with points pt 7 ps 0.6 lc 5 title 'kda_decode.bf16', '' index 4 using 3:($5 > 0 ? 1/0 : $4) with points pt 6 ps 0.6 lc 5 notitle, 'docs/perf/calibration-h200-2026-11-29/calibration.dat' index 5 using 3:($5 > 0 ? $4 : 1/0) with points pt 7 ps 0.6 lc 6 title 'kda_chunk.fp32', '' index 5 using 3:($5 > 0 ? 1/0 : $4) with points pt 6 ps 0.6 lc 6 notitle, 'docs/perf/calibration-h200-2026-11-29/calibration.dat' index 6 using 3:($5 > 0 ? $4 : 1/0) with points pt 7 ps 0.6 lc 7 title 'kda_chunk.bf16', '' index 6 using 3:($5 > 0 ? 1/0 : $4) with points pt 6 ps 0.6 lc 7 notitle
