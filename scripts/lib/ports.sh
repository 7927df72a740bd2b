# shellcheck shell=bash
# Shared by scripts/{k8s,temporal}/start.sh: sourced, not run.

# free_ports COUNT prints COUNT free loopback ports, below the ephemeral
# range (32768+) so that outgoing connections' source ports cannot take them
# between this pick and the bind. A port is free when nothing accepts a
# connection on it; should one be taken before its server binds it, the
# caller starts again on new ports. 1 when it finds too few.
free_ports() {
  local want=$1 p q tries=0 picked=()
  while [ "${#picked[@]}" -lt "$want" ]; do
    tries=$((tries + 1))
    [ "$tries" -le 1000 ] || return 1
    p=$((20000 + RANDOM % 12000))
    for q in "${picked[@]}"; do [ "$q" != "$p" ] || continue 2; done
    if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then continue; fi
    picked+=("$p")
  done
  echo "${picked[*]}"
}
