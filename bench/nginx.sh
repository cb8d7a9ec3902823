# Sourced by the server benchmarks: the nginx they compare against, one worker process with
# keep-alive, logs and temporary files under the benchmark's own directory. Its access log is on,
# buffered as operators run it (64k, flushed every second), unless ACCESS_LOG=off: compare it with
# galleryd's own access log on (its default) or off.
# write_nginx_conf FILE DIR PORT HTTP_DIRECTIVES SERVER_DIRECTIVES
write_nginx_conf() {
  local file="$1" dir="$2" port="$3" http_directives="$4" server_directives="$5" user_line=""
  [ "$(id -u)" -eq 0 ] && user_line="user root;"
  cat > "$file" <<CONF
$user_line
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/nginx-error.log warn;
events { worker_connections 4096; }
http {
  access_log $( [ "${ACCESS_LOG:-on}" = off ] && echo off || echo "$dir/access.log combined buffer=64k flush=1s" );
  keepalive_requests 1000000;
  keepalive_timeout 30s;
  tcp_nodelay on;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
$http_directives
  server {
    listen 127.0.0.1:$port;
$server_directives
  }
}
CONF
}
