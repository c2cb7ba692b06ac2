set -e  # the sched_pick microbenchmark, run from the repository root on the GPU machine (writes $OUT)
cd calibrate
nvcc -arch=sm_90 -O3 -o "$OUT/pick" sched_pick.cu
cuobjdump -sass "$OUT/pick" > "$OUT/pick.sass"
"$OUT/pick" > "$OUT/pick.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/smi.txt"
date -u > "$OUT/date.txt"
nvcc --version | tail -2 >> "$OUT/date.txt"
rm "$OUT/pick"
gzip -kf "$OUT/pick.txt"
head -2 "$OUT/pick.txt" | cut -c1-200; wc -l "$OUT/pick.txt"
