# Wall time against node count, log-log, one line a tool: what
# `bench/onnx_e2e.sh BUILD OUT --scaling` measured (a slope of 1 is linear).
#   gnuplot -e "data='DATA'; out='OUT.svg'; columns=N" bench/onnx_scaling.gp
set terminal svg size 900,600 noenhanced font "sans,12"
set output out
set title "shardpoint on generated decoders: seconds against nodes"
set xlabel "nodes"
set ylabel "wall seconds (best of runs)"
set logscale xy
set key top left
set grid
plot for [i=2:columns] data using 1:i with linespoints title columnhead(i)
