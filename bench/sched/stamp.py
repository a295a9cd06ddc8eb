# stdin to stdout, each line prefixed with the wall-clock time it arrived
# (seconds since the epoch): bench/sched/run stamps the server's stats lines
# so that busy.py can pick those of the measured window.
import sys
import time

for line in sys.stdin:
    sys.stdout.write(f"{time.time():.3f} {line}")
    sys.stdout.flush()
