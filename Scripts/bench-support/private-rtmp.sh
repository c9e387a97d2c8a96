# Sourced by the bench scripts that publish over RTMP: a private nginx-rtmp on a free loopback
# port, its files under a directory of the caller's work directory.
#
#   start_private_rtmp DIR   starts it; sets rtmp_port and rtmp_pid (the caller kills it by pid)

start_private_rtmp() {
  local dir=$1
  rtmp_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  mkdir -p "$dir"
  cat >"$dir/nginx.conf" <<CONF
daemon off;
master_process off;
pid $dir/nginx.pid;
error_log $dir/error.log notice;
load_module /usr/lib/nginx/modules/ngx_rtmp_module.so;
events { worker_connections 64; }
rtmp { server { listen 127.0.0.1:$rtmp_port; application live { live on; } } }
CONF
  : >"$dir/error.log"
  nginx -p "$dir/" -c "$dir/nginx.conf" &
  rtmp_pid=$!
  # nginx logs its rlimit check once it has bound the port.
  for _ in $(seq 50); do grep -q getrlimit "$dir/error.log" 2>/dev/null && break; sleep 0.1; done
}
