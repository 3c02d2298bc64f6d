# k3sim compare: the report's charts. Run `gnuplot charts.gp` in this directory.
set terminal svg size 800,460 dynamic enhanced font 'DejaVu Sans,14' background rgb 'white'
set output 'memory_per_request.svg'
reset
set title 'Memory per request: state + KV cache, all layers'
set xlabel 'context (tokens, log scale)'
set ylabel 'GiB per request (log scale)'
set datafile separator '\t'
set datafile missing '?'
set logscale x 2
set xrange [3276.8:1.31072e+06]
set xtics ('4K' 4096, '8K' 8192, '16K' 16384, '32K' 32768, '64K' 65536, '128K' 131072, '256K' 262144, '512K' 524288, '1M' 1048576)
set logscale y 10
set format y '%g'
set grid xtics ytics lc rgb '#dddddd' lt 1
set border 3 lc rgb '#444444'
set tics nomirror
set key outside right top Left reverse samplen 2
set lmargin 12
set arrow from 4822, graph 0 to 4822, graph 1 nohead dt 3 lw 1.5 lc rgb '#666666' back
set label 'kimi-k3 below k3-full-mla from 4,822' at 4822, graph 0.97 right rotate by 90 offset -0.7,0 font ',12' tc rgb '#444444'
plot 'memory_per_request.dat' using 1:2 title 'kimi-k3' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#0072B2', \
     'memory_per_request.dat' using 1:3 title 'k3-full-mla' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#D55E00', \
     'memory_per_request.dat' using 1:4 title 'k3-dsa' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#009E73'
unset output

set terminal svg size 800,460 dynamic enhanced font 'DejaVu Sans,14' background rgb 'white'
set output 'hbm_per_gpu.svg'
reset
set title 'HBM per GPU at batch 16 (above the gray line: does not fit)'
set xlabel 'context (tokens, log scale)'
set ylabel 'HBM per GPU (GiB, log scale)'
set datafile separator '\t'
set datafile missing '?'
set logscale x 2
set xrange [3276.8:1.31072e+06]
set xtics ('4K' 4096, '8K' 8192, '16K' 16384, '32K' 32768, '64K' 65536, '128K' 131072, '256K' 262144, '512K' 524288, '1M' 1048576)
set logscale y 10
set format y '%g'
set grid xtics ytics lc rgb '#dddddd' lt 1
set border 3 lc rgb '#444444'
set tics nomirror
set key outside right top Left reverse samplen 2
set lmargin 12
plot 'hbm_per_gpu.dat' using 1:2 title 'kimi-k3' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#0072B2', \
     'hbm_per_gpu.dat' using 1:3 title 'k3-full-mla' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#D55E00', \
     'hbm_per_gpu.dat' using 1:4 title 'k3-dsa' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#009E73', \
     'hbm_per_gpu.dat' using 1:5 title 'capacity' with linespoints lw 2.5 pt 7 ps 0.9 dt 2 lc rgb '#888888'
unset output

set terminal svg size 800,460 dynamic enhanced font 'DejaVu Sans,14' background rgb 'white'
set output 'max_batch.svg'
reset
set title 'Largest batch that fits on 16 GPUs'
set xlabel 'context (tokens, log scale)'
set ylabel 'requests (log scale)'
set datafile separator '\t'
set datafile missing '?'
set logscale x 2
set xrange [3276.8:1.31072e+06]
set xtics ('4K' 4096, '8K' 8192, '16K' 16384, '32K' 32768, '64K' 65536, '128K' 131072, '256K' 262144, '512K' 524288, '1M' 1048576)
set logscale y 10
set format y '%g'
set grid xtics ytics lc rgb '#dddddd' lt 1
set border 3 lc rgb '#444444'
set tics nomirror
set key outside right top Left reverse samplen 2
set lmargin 12
plot 'max_batch.dat' using 1:2 title 'kimi-k3' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#0072B2', \
     'max_batch.dat' using 1:3 title 'k3-full-mla' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#D55E00', \
     'max_batch.dat' using 1:4 title 'k3-dsa' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#009E73'
unset output

set terminal svg size 800,460 dynamic enhanced font 'DejaVu Sans,14' background rgb 'white'
set output 'ttft.svg'
reset
set title 'TTFT: prefill of one prompt'
set xlabel 'context (tokens, log scale)'
set ylabel 'TTFT (s, log scale)'
set datafile separator '\t'
set datafile missing '?'
set logscale x 2
set xrange [3276.8:1.31072e+06]
set xtics ('4K' 4096, '8K' 8192, '16K' 16384, '32K' 32768, '64K' 65536, '128K' 131072, '256K' 262144, '512K' 524288, '1M' 1048576)
set logscale y 10
set format y '%g'
set grid xtics ytics lc rgb '#dddddd' lt 1
set border 3 lc rgb '#444444'
set tics nomirror
set key outside right top Left reverse samplen 2
set lmargin 12
set arrow from 15289, graph 0 to 15289, graph 1 nohead dt 3 lw 1.5 lc rgb '#666666' back
set label 'kimi-k3 below k3-full-mla from 15,289' at 15289, graph 0.97 right rotate by 90 offset -0.7,0 font ',12' tc rgb '#444444'
plot 'ttft.dat' using 1:2 title 'kimi-k3' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#0072B2', \
     'ttft.dat' using 1:3 title 'k3-full-mla' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#D55E00', \
     'ttft.dat' using 1:4 title 'k3-dsa' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#009E73'
unset output

set terminal svg size 800,460 dynamic enhanced font 'DejaVu Sans,14' background rgb 'white'
set output 'tpot.svg'
reset
set title 'TPOT at batch 16'
set xlabel 'context (tokens, log scale)'
set ylabel 'TPOT (ms, log scale)'
set datafile separator '\t'
set datafile missing '?'
set logscale x 2
set xrange [3276.8:1.31072e+06]
set xtics ('4K' 4096, '8K' 8192, '16K' 16384, '32K' 32768, '64K' 65536, '128K' 131072, '256K' 262144, '512K' 524288, '1M' 1048576)
set logscale y 10
set format y '%g'
set grid xtics ytics lc rgb '#dddddd' lt 1
set border 3 lc rgb '#444444'
set tics nomirror
set key outside right top Left reverse samplen 2
set lmargin 12
set arrow from 145602, graph 0 to 145602, graph 1 nohead dt 3 lw 1.5 lc rgb '#666666' back
set label 'k3-dsa below kimi-k3 from 145,602' at 145602, graph 0.97 right rotate by 90 offset -0.7,0 font ',12' tc rgb '#444444'
set arrow from 8328, graph 0 to 8328, graph 1 nohead dt 3 lw 1.5 lc rgb '#666666' back
set label 'k3-dsa below k3-full-mla from 8,328' at 8328, graph 0.97 right rotate by 90 offset -0.7,0 font ',12' tc rgb '#444444'
plot 'tpot.dat' using 1:2 title 'kimi-k3' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#0072B2', \
     'tpot.dat' using 1:3 title 'k3-full-mla' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#D55E00', \
     'tpot.dat' using 1:4 title 'k3-dsa' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#009E73'
unset output

set terminal svg size 800,460 dynamic enhanced font 'DejaVu Sans,14' background rgb 'white'
set output 'throughput.svg'
reset
set title 'Decode throughput: batch 16 (solid), largest batch that fits (dashed)'
set xlabel 'context (tokens, log scale)'
set ylabel 'tokens/s per GPU (log scale)'
set datafile separator '\t'
set datafile missing '?'
set logscale x 2
set xrange [3276.8:1.31072e+06]
set xtics ('4K' 4096, '8K' 8192, '16K' 16384, '32K' 32768, '64K' 65536, '128K' 131072, '256K' 262144, '512K' 524288, '1M' 1048576)
set logscale y 10
set format y '%g'
set grid xtics ytics lc rgb '#dddddd' lt 1
set border 3 lc rgb '#444444'
set tics nomirror
set key outside right top Left reverse samplen 2
set lmargin 12
plot 'throughput.dat' using 1:2 title 'kimi-k3, batch 16' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#0072B2', \
     'throughput.dat' using 1:3 title 'kimi-k3, largest batch' with linespoints lw 2.5 pt 7 ps 0.9 dt 2 lc rgb '#0072B2', \
     'throughput.dat' using 1:4 title 'k3-full-mla, batch 16' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#D55E00', \
     'throughput.dat' using 1:5 title 'k3-full-mla, largest batch' with linespoints lw 2.5 pt 7 ps 0.9 dt 2 lc rgb '#D55E00', \
     'throughput.dat' using 1:6 title 'k3-dsa, batch 16' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#009E73', \
     'throughput.dat' using 1:7 title 'k3-dsa, largest batch' with linespoints lw 2.5 pt 7 ps 0.9 dt 2 lc rgb '#009E73'
unset output

set terminal svg size 1100,600 dynamic enhanced font 'DejaVu Sans,14' background rgb 'white'
set output 'decode_breakdown.svg'
reset
set title 'Where a decode step goes (batch 16), by op class'
set ylabel 'share of the decode step (%)'
set datafile separator '\t'
set style data histograms
set style histogram rowstacked title offset 0,-1.2
set style fill solid 0.9 border rgb 'white'
set boxwidth 0.8
set grid ytics lc rgb '#dddddd' lt 1
set border 3 lc rgb '#444444'
set tics nomirror
set xtics rotate by -30 left scale 0
set bmargin 7
set key outside right top Left reverse samplen 2
set yrange [0:100]
plot newhistogram 'context 4K' lt 1, \
     'decode_breakdown.dat' every ::0::2 using 2:xtic(1) title 'attention (KDA)' lc rgb '#0072B2', \
     'decode_breakdown.dat' every ::0::2 using 3 title 'attention (MLA)' lc rgb '#D55E00', \
     'decode_breakdown.dat' every ::0::2 using 4 title 'DSA indexer' lc rgb '#009E73', \
     'decode_breakdown.dat' every ::0::2 using 5 title 'MoE experts' lc rgb '#CC79A7', \
     'decode_breakdown.dat' every ::0::2 using 6 title 'MoE comm (EP)' lc rgb '#E69F00', \
     'decode_breakdown.dat' every ::0::2 using 7 title 'TP comm' lc rgb '#56B4E9', \
     'decode_breakdown.dat' every ::0::2 using 8 title 'dense GEMMs' lc rgb '#F0E442', \
     'decode_breakdown.dat' every ::0::2 using 9 title 'other' lc rgb '#666666', \
     newhistogram 'context 64K' lt 1, \
     'decode_breakdown.dat' every ::3::5 using 2:xtic(1) notitle lc rgb '#0072B2', \
     'decode_breakdown.dat' every ::3::5 using 3 notitle lc rgb '#D55E00', \
     'decode_breakdown.dat' every ::3::5 using 4 notitle lc rgb '#009E73', \
     'decode_breakdown.dat' every ::3::5 using 5 notitle lc rgb '#CC79A7', \
     'decode_breakdown.dat' every ::3::5 using 6 notitle lc rgb '#E69F00', \
     'decode_breakdown.dat' every ::3::5 using 7 notitle lc rgb '#56B4E9', \
     'decode_breakdown.dat' every ::3::5 using 8 notitle lc rgb '#F0E442', \
     'decode_breakdown.dat' every ::3::5 using 9 notitle lc rgb '#666666', \
     newhistogram 'context 1M' lt 1, \
     'decode_breakdown.dat' every ::6::8 using 2:xtic(1) notitle lc rgb '#0072B2', \
     'decode_breakdown.dat' every ::6::8 using 3 notitle lc rgb '#D55E00', \
     'decode_breakdown.dat' every ::6::8 using 4 notitle lc rgb '#009E73', \
     'decode_breakdown.dat' every ::6::8 using 5 notitle lc rgb '#CC79A7', \
     'decode_breakdown.dat' every ::6::8 using 6 notitle lc rgb '#E69F00', \
     'decode_breakdown.dat' every ::6::8 using 7 notitle lc rgb '#56B4E9', \
     'decode_breakdown.dat' every ::6::8 using 8 notitle lc rgb '#F0E442', \
     'decode_breakdown.dat' every ::6::8 using 9 notitle lc rgb '#666666'
unset output

set terminal svg size 1100,600 dynamic enhanced font 'DejaVu Sans,14' background rgb 'white'
set output 'prefill_breakdown.svg'
reset
set title 'Where the prefill (TTFT) goes, by op class'
set ylabel 'share of the prefill (%)'
set datafile separator '\t'
set style data histograms
set style histogram rowstacked title offset 0,-1.2
set style fill solid 0.9 border rgb 'white'
set boxwidth 0.8
set grid ytics lc rgb '#dddddd' lt 1
set border 3 lc rgb '#444444'
set tics nomirror
set xtics rotate by -30 left scale 0
set bmargin 7
set key outside right top Left reverse samplen 2
set yrange [0:100]
plot newhistogram 'context 4K' lt 1, \
     'prefill_breakdown.dat' every ::0::2 using 2:xtic(1) title 'attention (KDA)' lc rgb '#0072B2', \
     'prefill_breakdown.dat' every ::0::2 using 3 title 'attention (MLA)' lc rgb '#D55E00', \
     'prefill_breakdown.dat' every ::0::2 using 4 title 'DSA indexer' lc rgb '#009E73', \
     'prefill_breakdown.dat' every ::0::2 using 5 title 'MoE experts' lc rgb '#CC79A7', \
     'prefill_breakdown.dat' every ::0::2 using 6 title 'MoE comm (EP)' lc rgb '#E69F00', \
     'prefill_breakdown.dat' every ::0::2 using 7 title 'TP comm' lc rgb '#56B4E9', \
     'prefill_breakdown.dat' every ::0::2 using 8 title 'dense GEMMs' lc rgb '#F0E442', \
     'prefill_breakdown.dat' every ::0::2 using 9 title 'other' lc rgb '#666666', \
     newhistogram 'context 64K' lt 1, \
     'prefill_breakdown.dat' every ::3::5 using 2:xtic(1) notitle lc rgb '#0072B2', \
     'prefill_breakdown.dat' every ::3::5 using 3 notitle lc rgb '#D55E00', \
     'prefill_breakdown.dat' every ::3::5 using 4 notitle lc rgb '#009E73', \
     'prefill_breakdown.dat' every ::3::5 using 5 notitle lc rgb '#CC79A7', \
     'prefill_breakdown.dat' every ::3::5 using 6 notitle lc rgb '#E69F00', \
     'prefill_breakdown.dat' every ::3::5 using 7 notitle lc rgb '#56B4E9', \
     'prefill_breakdown.dat' every ::3::5 using 8 notitle lc rgb '#F0E442', \
     'prefill_breakdown.dat' every ::3::5 using 9 notitle lc rgb '#666666', \
     newhistogram 'context 1M' lt 1, \
     'prefill_breakdown.dat' every ::6::8 using 2:xtic(1) notitle lc rgb '#0072B2', \
     'prefill_breakdown.dat' every ::6::8 using 3 notitle lc rgb '#D55E00', \
     'prefill_breakdown.dat' every ::6::8 using 4 notitle lc rgb '#009E73', \
     'prefill_breakdown.dat' every ::6::8 using 5 notitle lc rgb '#CC79A7', \
     'prefill_breakdown.dat' every ::6::8 using 6 notitle lc rgb '#E69F00', \
     'prefill_breakdown.dat' every ::6::8 using 7 notitle lc rgb '#56B4E9', \
     'prefill_breakdown.dat' every ::6::8 using 8 notitle lc rgb '#F0E442', \
     'prefill_breakdown.dat' every ::6::8 using 9 notitle lc rgb '#666666'
unset output

set terminal pngcairo size 960,540 enhanced font 'DejaVu Sans,13' background rgb 'white'
set output 'memory_per_request.png'
reset
set title 'Memory per request: state + KV cache, all layers'
set xlabel 'context (tokens, log scale)'
set ylabel 'GiB per request (log scale)'
set datafile separator '\t'
set datafile missing '?'
set logscale x 2
set xrange [3276.8:1.31072e+06]
set xtics ('4K' 4096, '8K' 8192, '16K' 16384, '32K' 32768, '64K' 65536, '128K' 131072, '256K' 262144, '512K' 524288, '1M' 1048576)
set logscale y 10
set format y '%g'
set grid xtics ytics lc rgb '#dddddd' lt 1
set border 3 lc rgb '#444444'
set tics nomirror
set key outside right top Left reverse samplen 2
set lmargin 12
set arrow from 4822, graph 0 to 4822, graph 1 nohead dt 3 lw 1.5 lc rgb '#666666' back
set label 'kimi-k3 below k3-full-mla from 4,822' at 4822, graph 0.97 right rotate by 90 offset -0.7,0 font ',12' tc rgb '#444444'
plot 'memory_per_request.dat' using 1:2 title 'kimi-k3' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#0072B2', \
     'memory_per_request.dat' using 1:3 title 'k3-full-mla' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#D55E00', \
     'memory_per_request.dat' using 1:4 title 'k3-dsa' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#009E73'
unset output

set terminal pngcairo size 960,540 enhanced font 'DejaVu Sans,13' background rgb 'white'
set output 'hbm_per_gpu.png'
reset
set title 'HBM per GPU at batch 16 (above the gray line: does not fit)'
set xlabel 'context (tokens, log scale)'
set ylabel 'HBM per GPU (GiB, log scale)'
set datafile separator '\t'
set datafile missing '?'
set logscale x 2
set xrange [3276.8:1.31072e+06]
set xtics ('4K' 4096, '8K' 8192, '16K' 16384, '32K' 32768, '64K' 65536, '128K' 131072, '256K' 262144, '512K' 524288, '1M' 1048576)
set logscale y 10
set format y '%g'
set grid xtics ytics lc rgb '#dddddd' lt 1
set border 3 lc rgb '#444444'
set tics nomirror
set key outside right top Left reverse samplen 2
set lmargin 12
plot 'hbm_per_gpu.dat' using 1:2 title 'kimi-k3' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#0072B2', \
     'hbm_per_gpu.dat' using 1:3 title 'k3-full-mla' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#D55E00', \
     'hbm_per_gpu.dat' using 1:4 title 'k3-dsa' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#009E73', \
     'hbm_per_gpu.dat' using 1:5 title 'capacity' with linespoints lw 2.5 pt 7 ps 0.9 dt 2 lc rgb '#888888'
unset output

set terminal pngcairo size 960,540 enhanced font 'DejaVu Sans,13' background rgb 'white'
set output 'max_batch.png'
reset
set title 'Largest batch that fits on 16 GPUs'
set xlabel 'context (tokens, log scale)'
set ylabel 'requests (log scale)'
set datafile separator '\t'
set datafile missing '?'
set logscale x 2
set xrange [3276.8:1.31072e+06]
set xtics ('4K' 4096, '8K' 8192, '16K' 16384, '32K' 32768, '64K' 65536, '128K' 131072, '256K' 262144, '512K' 524288, '1M' 1048576)
set logscale y 10
set format y '%g'
set grid xtics ytics lc rgb '#dddddd' lt 1
set border 3 lc rgb '#444444'
set tics nomirror
set key outside right top Left reverse samplen 2
set lmargin 12
plot 'max_batch.dat' using 1:2 title 'kimi-k3' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#0072B2', \
     'max_batch.dat' using 1:3 title 'k3-full-mla' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#D55E00', \
     'max_batch.dat' using 1:4 title 'k3-dsa' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#009E73'
unset output

set terminal pngcairo size 960,540 enhanced font 'DejaVu Sans,13' background rgb 'white'
set output 'ttft.png'
reset
set title 'TTFT: prefill of one prompt'
set xlabel 'context (tokens, log scale)'
set ylabel 'TTFT (s, log scale)'
set datafile separator '\t'
set datafile missing '?'
set logscale x 2
set xrange [3276.8:1.31072e+06]
set xtics ('4K' 4096, '8K' 8192, '16K' 16384, '32K' 32768, '64K' 65536, '128K' 131072, '256K' 262144, '512K' 524288, '1M' 1048576)
set logscale y 10
set format y '%g'
set grid xtics ytics lc rgb '#dddddd' lt 1
set border 3 lc rgb '#444444'
set tics nomirror
set key outside right top Left reverse samplen 2
set lmargin 12
set arrow from 15289, graph 0 to 15289, graph 1 nohead dt 3 lw 1.5 lc rgb '#666666' back
set label 'kimi-k3 below k3-full-mla from 15,289' at 15289, graph 0.97 right rotate by 90 offset -0.7,0 font ',12' tc rgb '#444444'
plot 'ttft.dat' using 1:2 title 'kimi-k3' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#0072B2', \
     'ttft.dat' using 1:3 title 'k3-full-mla' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#D55E00', \
     'ttft.dat' using 1:4 title 'k3-dsa' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#009E73'
unset output

set terminal pngcairo size 960,540 enhanced font 'DejaVu Sans,13' background rgb 'white'
set output 'tpot.png'
reset
set title 'TPOT at batch 16'
set xlabel 'context (tokens, log scale)'
set ylabel 'TPOT (ms, log scale)'
set datafile separator '\t'
set datafile missing '?'
set logscale x 2
set xrange [3276.8:1.31072e+06]
set xtics ('4K' 4096, '8K' 8192, '16K' 16384, '32K' 32768, '64K' 65536, '128K' 131072, '256K' 262144, '512K' 524288, '1M' 1048576)
set logscale y 10
set format y '%g'
set grid xtics ytics lc rgb '#dddddd' lt 1
set border 3 lc rgb '#444444'
set tics nomirror
set key outside right top Left reverse samplen 2
set lmargin 12
set arrow from 145602, graph 0 to 145602, graph 1 nohead dt 3 lw 1.5 lc rgb '#666666' back
set label 'k3-dsa below kimi-k3 from 145,602' at 145602, graph 0.97 right rotate by 90 offset -0.7,0 font ',12' tc rgb '#444444'
set arrow from 8328, graph 0 to 8328, graph 1 nohead dt 3 lw 1.5 lc rgb '#666666' back
set label 'k3-dsa below k3-full-mla from 8,328' at 8328, graph 0.97 right rotate by 90 offset -0.7,0 font ',12' tc rgb '#444444'
plot 'tpot.dat' using 1:2 title 'kimi-k3' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#0072B2', \
     'tpot.dat' using 1:3 title 'k3-full-mla' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#D55E00', \
     'tpot.dat' using 1:4 title 'k3-dsa' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#009E73'
unset output

set terminal pngcairo size 960,540 enhanced font 'DejaVu Sans,13' background rgb 'white'
set output 'throughput.png'
reset
set title 'Decode throughput: batch 16 (solid), largest batch that fits (dashed)'
set xlabel 'context (tokens, log scale)'
set ylabel 'tokens/s per GPU (log scale)'
set datafile separator '\t'
set datafile missing '?'
set logscale x 2
set xrange [3276.8:1.31072e+06]
set xtics ('4K' 4096, '8K' 8192, '16K' 16384, '32K' 32768, '64K' 65536, '128K' 131072, '256K' 262144, '512K' 524288, '1M' 1048576)
set logscale y 10
set format y '%g'
set grid xtics ytics lc rgb '#dddddd' lt 1
set border 3 lc rgb '#444444'
set tics nomirror
set key outside right top Left reverse samplen 2
set lmargin 12
plot 'throughput.dat' using 1:2 title 'kimi-k3, batch 16' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#0072B2', \
     'throughput.dat' using 1:3 title 'kimi-k3, largest batch' with linespoints lw 2.5 pt 7 ps 0.9 dt 2 lc rgb '#0072B2', \
     'throughput.dat' using 1:4 title 'k3-full-mla, batch 16' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#D55E00', \
     'throughput.dat' using 1:5 title 'k3-full-mla, largest batch' with linespoints lw 2.5 pt 7 ps 0.9 dt 2 lc rgb '#D55E00', \
     'throughput.dat' using 1:6 title 'k3-dsa, batch 16' with linespoints lw 2.5 pt 7 ps 0.9 dt 1 lc rgb '#009E73', \
     'throughput.dat' using 1:7 title 'k3-dsa, largest batch' with linespoints lw 2.5 pt 7 ps 0.9 dt 2 lc rgb '#009E73'
unset output

set terminal pngcairo size 1100,600 enhanced font 'DejaVu Sans,13' background rgb 'white'
set output 'decode_breakdown.png'
reset
set title 'Where a decode step goes (batch 16), by op class'
set ylabel 'share of the decode step (%)'
set datafile separator '\t'
set style data histograms
set style histogram rowstacked title offset 0,-1.2
set style fill solid 0.9 border rgb 'white'
set boxwidth 0.8
set grid ytics lc rgb '#dddddd' lt 1
set border 3 lc rgb '#444444'
set tics nomirror
set xtics rotate by -30 left scale 0
set bmargin 7
set key outside right top Left reverse samplen 2
set yrange [0:100]
plot newhistogram 'context 4K' lt 1, \
     'decode_breakdown.dat' every ::0::2 using 2:xtic(1) title 'attention (KDA)' lc rgb '#0072B2', \
     'decode_breakdown.dat' every ::0::2 using 3 title 'attention (MLA)' lc rgb '#D55E00', \
     'decode_breakdown.dat' every ::0::2 using 4 title 'DSA indexer' lc rgb '#009E73', \
     'decode_breakdown.dat' every ::0::2 using 5 title 'MoE experts' lc rgb '#CC79A7', \
     'decode_breakdown.dat' every ::0::2 using 6 title 'MoE comm (EP)' lc rgb '#E69F00', \
     'decode_breakdown.dat' every ::0::2 using 7 title 'TP comm' lc rgb '#56B4E9', \
     'decode_breakdown.dat' every ::0::2 using 8 title 'dense GEMMs' lc rgb '#F0E442', \
     'decode_breakdown.dat' every ::0::2 using 9 title 'other' lc rgb '#666666', \
     newhistogram 'context 64K' lt 1, \
     'decode_breakdown.dat' every ::3::5 using 2:xtic(1) notitle lc rgb '#0072B2', \
     'decode_breakdown.dat' every ::3::5 using 3 notitle lc rgb '#D55E00', \
     'decode_breakdown.dat' every ::3::5 using 4 notitle lc rgb '#009E73', \
     'decode_breakdown.dat' every ::3::5 using 5 notitle lc rgb '#CC79A7', \
     'decode_breakdown.dat' every ::3::5 using 6 notitle lc rgb '#E69F00', \
     'decode_breakdown.dat' every ::3::5 using 7 notitle lc rgb '#56B4E9', \
     'decode_breakdown.dat' every ::3::5 using 8 notitle lc rgb '#F0E442', \
     'decode_breakdown.dat' every ::3::5 using 9 notitle lc rgb '#666666', \
     newhistogram 'context 1M' lt 1, \
     'decode_breakdown.dat' every ::6::8 using 2:xtic(1) notitle lc rgb '#0072B2', \
     'decode_breakdown.dat' every ::6::8 using 3 notitle lc rgb '#D55E00', \
     'decode_breakdown.dat' every ::6::8 using 4 notitle lc rgb '#009E73', \
     'decode_breakdown.dat' every ::6::8 using 5 notitle lc rgb '#CC79A7', \
     'decode_breakdown.dat' every ::6::8 using 6 notitle lc rgb '#E69F00', \
     'decode_breakdown.dat' every ::6::8 using 7 notitle lc rgb '#56B4E9', \
     'decode_breakdown.dat' every ::6::8 using 8 notitle lc rgb '#F0E442', \
     'decode_breakdown.dat' every ::6::8 using 9 notitle lc rgb '#666666'
unset output

set terminal pngcairo size 1100,600 enhanced font 'DejaVu Sans,13' background rgb 'white'
set output 'prefill_breakdown.png'
reset
set title 'Where the prefill (TTFT) goes, by op class'
set ylabel 'share of the prefill (%)'
set datafile separator '\t'
set style data histograms
set style histogram rowstacked title offset 0,-1.2
set style fill solid 0.9 border rgb 'white'
set boxwidth 0.8
set grid ytics lc rgb '#dddddd' lt 1
set border 3 lc rgb '#444444'
set tics nomirror
set xtics rotate by -30 left scale 0
set bmargin 7
set key outside right top Left reverse samplen 2
set yrange [0:100]
plot newhistogram 'context 4K' lt 1, \
     'prefill_breakdown.dat' every ::0::2 using 2:xtic(1) title 'attention (KDA)' lc rgb '#0072B2', \
     'prefill_breakdown.dat' every ::0::2 using 3 title 'attention (MLA)' lc rgb '#D55E00', \
     'prefill_breakdown.dat' every ::0::2 using 4 title 'DSA indexer' lc rgb '#009E73', \
     'prefill_breakdown.dat' every ::0::2 using 5 title 'MoE experts' lc rgb '#CC79A7', \
     'prefill_breakdown.dat' every ::0::2 using 6 title 'MoE comm (EP)' lc rgb '#E69F00', \
     'prefill_breakdown.dat' every ::0::2 using 7 title 'TP comm' lc rgb '#56B4E9', \
     'prefill_breakdown.dat' every ::0::2 using 8 title 'dense GEMMs' lc rgb '#F0E442', \
     'prefill_breakdown.dat' every ::0::2 using 9 title 'other' lc rgb '#666666', \
     newhistogram 'context 64K' lt 1, \
     'prefill_breakdown.dat' every ::3::5 using 2:xtic(1) notitle lc rgb '#0072B2', \
     'prefill_breakdown.dat' every ::3::5 using 3 notitle lc rgb '#D55E00', \
     'prefill_breakdown.dat' every ::3::5 using 4 notitle lc rgb '#009E73', \
     'prefill_breakdown.dat' every ::3::5 using 5 notitle lc rgb '#CC79A7', \
     'prefill_breakdown.dat' every ::3::5 using 6 notitle lc rgb '#E69F00', \
     'prefill_breakdown.dat' every ::3::5 using 7 notitle lc rgb '#56B4E9', \
     'prefill_breakdown.dat' every ::3::5 using 8 notitle lc rgb '#F0E442', \
     'prefill_breakdown.dat' every ::3::5 using 9 notitle lc rgb '#666666', \
     newhistogram 'context 1M' lt 1, \
     'prefill_breakdown.dat' every ::6::8 using 2:xtic(1) notitle lc rgb '#0072B2', \
     'prefill_breakdown.dat' every ::6::8 using 3 notitle lc rgb '#D55E00', \
     'prefill_breakdown.dat' every ::6::8 using 4 notitle lc rgb '#009E73', \
     'prefill_breakdown.dat' every ::6::8 using 5 notitle lc rgb '#CC79A7', \
     'prefill_breakdown.dat' every ::6::8 using 6 notitle lc rgb '#E69F00', \
     'prefill_breakdown.dat' every ::6::8 using 7 notitle lc rgb '#56B4E9', \
     'prefill_breakdown.dat' every ::6::8 using 8 notitle lc rgb '#F0E442', \
     'prefill_breakdown.dat' every ::6::8 using 9 notitle lc rgb '#666666'
unset output

