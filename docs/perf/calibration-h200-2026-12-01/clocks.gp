set terminal pngcairo size 900,520 font 'sans,10'
set output 'docs/perf/calibration-h200-2026-12-01/clocks.png'
set multiplot layout 2,1 title 'H200 calibration runs 2026-12-01: burst grid (0-13 s), then 10 s preheat + sustained grid'
set ylabel 'SM clock (MHz)'; set yrange [0:2100]; set key bottom right
plot for [i=0:2] 'docs/perf/calibration-h200-2026-12-01/clocks.dat' index i using 1:2 with lines title sprintf('run %d', i+1)
set ylabel 'power (W)'; set xlabel 'seconds since the call started'; set yrange [0:900]
plot for [i=0:2] 'docs/perf/calibration-h200-2026-12-01/clocks.dat' index i using 1:3 with lines title sprintf('run %d', i+1), 700 with lines dt 2 lc rgb 'black' title 'power limit'
unset multiplot
