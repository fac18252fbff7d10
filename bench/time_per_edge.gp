# Time per edge against graph size, manual_shard and boost::topological_sort
# (bench/run.sh writes the data file and runs this).
#   gnuplot -e "data='DATA'; out='OUT.png'" bench/time_per_edge.gp
set terminal pngcairo size 900,560 noenhanced
set output out
set title "manual_shard (8 points) vs boost::topological_sort, layered residual DAGs"
set xlabel "vertices"
set ylabel "ns per edge"
set logscale x
set logscale y
set key top left
set grid
plot data using 1:2 with linespoints title "manual_shard, topological labels", \
     data using 1:3 with linespoints title "manual_shard, random labels", \
     data using 1:4 with linespoints title "topological_sort, topological labels", \
     data using 1:5 with linespoints title "topological_sort, random labels"
