# k3sim serve: the report's charts. Run `gnuplot charts.gp` in this directory.
set terminal svg size 800,460 dynamic enhanced font 'DejaVu Sans,14' background rgb 'white'
set output 'front-tpot.svg'
reset
set title 'Output tokens/s per GPU vs TPOT: Pareto fronts (dashed: the SLO)'
set xlabel 'TPOT (ms)'
set ylabel 'output tokens/s per GPU'
set datafile separator '\t'
set datafile missing '?'
set logscale x 10
set format x '%g'
set yrange [0:*]
set grid xtics ytics lc rgb '#dddddd' lt 1
set border 3 lc rgb '#444444'
set tics nomirror
set key outside right top Left reverse samplen 2
set lmargin 12
plot 'front-tpot.dat' index 0 using 1:2 title 'the plan''s front' with steps lw 2 dt 1 lc rgb '#CC79A7', \
     'front-tpot.dat' index 1 using 1:2 title 'co-located' with steps lw 2 dt 1 lc rgb '#0072B2', \
     'front-tpot.dat' index 2 using 1:2 title 'disaggregated (P/D)' with steps lw 2 dt 1 lc rgb '#D55E00', \
     'front-tpot.dat' index 3 using 1:2 title 'SLO' with lines lw 2 dt 2 lc rgb '#888888'
unset output

set terminal svg size 800,460 dynamic enhanced font 'DejaVu Sans,14' background rgb 'white'
set output 'front-ttft.svg'
reset
set title 'Output tokens/s per GPU vs TTFT: Pareto fronts (dashed: the SLO)'
set xlabel 'TTFT, p90 estimate (s)'
set ylabel 'output tokens/s per GPU'
set datafile separator '\t'
set datafile missing '?'
set logscale x 10
set format x '%g'
set yrange [0:*]
set grid xtics ytics lc rgb '#dddddd' lt 1
set border 3 lc rgb '#444444'
set tics nomirror
set key outside right top Left reverse samplen 2
set lmargin 12
plot 'front-ttft.dat' index 0 using 1:2 title 'the plan''s front' with steps lw 2 dt 1 lc rgb '#CC79A7', \
     'front-ttft.dat' index 1 using 1:2 title 'co-located' with steps lw 2 dt 1 lc rgb '#0072B2', \
     'front-ttft.dat' index 2 using 1:2 title 'disaggregated (P/D)' with steps lw 2 dt 1 lc rgb '#D55E00', \
     'front-ttft.dat' index 3 using 1:2 title 'SLO' with lines lw 2 dt 2 lc rgb '#888888'
unset output

set terminal pngcairo size 960,540 enhanced font 'DejaVu Sans,13' background rgb 'white'
set output 'front-tpot.png'
reset
set title 'Output tokens/s per GPU vs TPOT: Pareto fronts (dashed: the SLO)'
set xlabel 'TPOT (ms)'
set ylabel 'output tokens/s per GPU'
set datafile separator '\t'
set datafile missing '?'
set logscale x 10
set format x '%g'
set yrange [0:*]
set grid xtics ytics lc rgb '#dddddd' lt 1
set border 3 lc rgb '#444444'
set tics nomirror
set key outside right top Left reverse samplen 2
set lmargin 12
plot 'front-tpot.dat' index 0 using 1:2 title 'the plan''s front' with steps lw 2 dt 1 lc rgb '#CC79A7', \
     'front-tpot.dat' index 1 using 1:2 title 'co-located' with steps lw 2 dt 1 lc rgb '#0072B2', \
     'front-tpot.dat' index 2 using 1:2 title 'disaggregated (P/D)' with steps lw 2 dt 1 lc rgb '#D55E00', \
     'front-tpot.dat' index 3 using 1:2 title 'SLO' with lines lw 2 dt 2 lc rgb '#888888'
unset output

set terminal pngcairo size 960,540 enhanced font 'DejaVu Sans,13' background rgb 'white'
set output 'front-ttft.png'
reset
set title 'Output tokens/s per GPU vs TTFT: Pareto fronts (dashed: the SLO)'
set xlabel 'TTFT, p90 estimate (s)'
set ylabel 'output tokens/s per GPU'
set datafile separator '\t'
set datafile missing '?'
set logscale x 10
set format x '%g'
set yrange [0:*]
set grid xtics ytics lc rgb '#dddddd' lt 1
set border 3 lc rgb '#444444'
set tics nomirror
set key outside right top Left reverse samplen 2
set lmargin 12
plot 'front-ttft.dat' index 0 using 1:2 title 'the plan''s front' with steps lw 2 dt 1 lc rgb '#CC79A7', \
     'front-ttft.dat' index 1 using 1:2 title 'co-located' with steps lw 2 dt 1 lc rgb '#0072B2', \
     'front-ttft.dat' index 2 using 1:2 title 'disaggregated (P/D)' with steps lw 2 dt 1 lc rgb '#D55E00', \
     'front-ttft.dat' index 3 using 1:2 title 'SLO' with lines lw 2 dt 2 lc rgb '#888888'
unset output

