#!/usr/bin/env bash
# Installs the subagents skill (skill/subagents/) where Claude Code, OpenCode, Codex, Copilot CLI, Gemini CLI
# and Qwen Code look for skills.
# Plain bash and coreutils, nothing else. One JSON line per harness on stdout, like the other commands.
# Where each harness looks, and why: docs/skill.md.
set -u

usage() {
  cat <<'EOF'
usage: scripts/install-skill.sh [--harness claude|opencode|codex|copilot|gemini|qwen|all] [--scope project|user]
                                [--project DIR] [--link] [--uninstall] [--dry-run]

Copies the subagents skill folder (skill/subagents/) into the skills folder of each agent harness.

  --harness H    claude, opencode, codex, copilot, gemini, qwen, all (default: the six), or a comma
                 list (claude,codex: the pair that every one of the six reads, see docs/skill.md)
  --scope S      project (default): into DIR, for everyone working in that repository
                 user: into your home, for every project
  --project DIR  the project for --scope project (default: the current directory; use its root)
  --link         symlink the folder instead of copying it (updates follow this checkout)
  --uninstall    remove the installed skill (only a folder or link that is this skill)
  --dry-run      print what would be done, change nothing
  -h, --help     this text

Where it goes (SKILL.md inside):
  claude    project DIR/.claude/skills/subagents      user ${CLAUDE_CONFIG_DIR:-~/.claude}/skills/subagents
  opencode  project DIR/.opencode/skills/subagents    user ${XDG_CONFIG_HOME:-~/.config}/opencode/skills/subagents
  codex     project DIR/.agents/skills/subagents      user ~/.agents/skills/subagents
  copilot   project DIR/.github/skills/subagents      user ${COPILOT_HOME:-~/.copilot}/skills/subagents
  gemini    project DIR/.gemini/skills/subagents      user ${GEMINI_CLI_HOME:-~}/.gemini/skills/subagents
  qwen      project DIR/.qwen/skills/subagents        user ${QWEN_HOME:-~/.qwen}/skills/subagents

Output, one line per harness: {"ok":true,"harness","scope","path","action","mode","dryRun"}
(action: installed, updated, removed, absent). Errors: {"ok":false,"code","error","details":{"hint"}}, exit 1.
Re-run to update a copy; restart the agent CLI to pick up changes.
EOF
}

# --- JSON output -----------------------------------------------------------------------------------

json_str() {
  local s=$1 out='' c i
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\t'/\\t}
  s=${s//$'\r'/\\r}
  if [[ $s =~ [[:cntrl:]] ]]; then
    for ((i = 0; i < ${#s}; i++)); do
      c=${s:i:1}
      if [[ $c == [[:cntrl:]] ]]; then printf -v c '\\u%04x' "'$c"; fi
      out+=$c
    done
    s=$out
  fi
  printf '"%s"' "$s"
}

# fail CODE MESSAGE HINT [extra JSON members for details, each ',"k":v'] — prints the error line.
fail_line() {
  printf '{"ok":false,"code":%s,"error":%s,"details":{%s"hint":%s}}\n' \
    "$(json_str "$1")" "$(json_str "$2")" "${4:+${4#,},}" "$(json_str "$3")"
}

die() {
  fail_line "$@"
  exit 1
}

# --- flags -----------------------------------------------------------------------------------------

harness='' scope='' project='' link='' uninstall='' dry=''
seen=' '

take_once() { # flag name; refuses a flag given twice
  if [[ $seen == *" $1 "* ]]; then die E_ARG_INVALID "$1 was given twice" "give each flag once"; fi
  seen+="$1 "
}

while (($#)); do
  arg=$1
  value=''
  has_value=''
  if [[ $arg == --*=* ]]; then
    value=${arg#*=}
    arg=${arg%%=*}
    has_value=1
  fi
  case $arg in
    -h | --help)
      usage
      exit 0
      ;;
    --harness | --scope | --project)
      take_once "$arg"
      if [[ -z $has_value ]]; then
        if (($# < 2)); then
          case $arg in
            --harness) hint='--harness claude|opencode|codex|copilot|gemini|qwen|all' ;;
            --scope) hint='--scope project|user' ;;
            *) hint='--project DIR' ;;
          esac
          die E_ARG_INVALID "$arg needs a value" "$hint"
        fi
        value=$2
        shift
      fi
      case $arg in
        --harness) harness=$value ;;
        --scope) scope=$value ;;
        --project) project=$value ;;
      esac
      ;;
    --link | --uninstall | --dry-run)
      take_once "$arg"
      if [[ -n $has_value ]]; then die E_ARG_INVALID "$arg takes no value" "write $arg alone"; fi
      case $arg in
        --link) link=1 ;;
        --uninstall) uninstall=1 ;;
        --dry-run) dry=1 ;;
      esac
      ;;
    *)
      case $arg in
        --harnes | --harnesses | --cli) hint='did you mean --harness?' ;;
        --dryrun | --dry | -n) hint='did you mean --dry-run?' ;;
        --symlink) hint='did you mean --link?' ;;
        --remove | --delete) hint='did you mean --uninstall?' ;;
        --dir | --project-dir) hint='did you mean --project?' ;;
        *) hint='see --help for the flags' ;;
      esac
      die E_ARG_UNKNOWN "unknown argument: $arg" "$hint"
      ;;
  esac
  shift
done

scope=${scope:-project}
case $scope in
  project | user) ;;
  *) die E_ARG_INVALID "--scope must be project or user, not \"$scope\"" "--scope project (a repository) or --scope user (your home)" ;;
esac

harnesses=()
IFS=',' read -r -a wanted <<<"${harness:-all}"
for h in "${wanted[@]}"; do
  case $h in
    all) harnesses+=(claude opencode codex copilot gemini qwen) ;;
    claude | opencode | codex | copilot | gemini | qwen) harnesses+=("$h") ;;
    *) die E_ARG_INVALID "--harness must be claude, opencode, codex, copilot, gemini, qwen or all, not \"$h\"" "e.g. --harness claude, or --harness claude,codex" ;;
  esac
done
if ((${#harnesses[@]} == 0)); then die E_ARG_INVALID "--harness is empty" "e.g. --harness all"; fi
# Keep the first of duplicates (claude,all).
uniq=()
for h in "${harnesses[@]}"; do
  [[ " ${uniq[*]-} " == *" $h "* ]] || uniq+=("$h")
done
harnesses=("${uniq[@]}")

if [[ -n $link && -n $uninstall ]]; then die E_ARG_INVALID "--link and --uninstall cannot go together" "--uninstall removes a copy or a link alike"; fi
if [[ $scope == user && -n $project ]]; then die E_ARG_INVALID "--project is for --scope project" "drop --project, or use --scope project"; fi

# --- where --------------------------------------------------------------------------------------------

here=$(cd -P "$(dirname "${BASH_SOURCE[0]}")/.." && pwd) || die E_INTERNAL "cannot find the repository of this script" "run it as scripts/install-skill.sh from a subagents checkout"
src=$here/skill/subagents
if [[ ! -f $src/SKILL.md ]]; then die E_SKILL_MISSING "$src/SKILL.md is missing" "run the script from a complete subagents checkout"; fi

if [[ $scope == project ]]; then
  project=${project:-.}
  if [[ ! -d $project ]]; then die E_ARG_INVALID "--project $project is not a directory" "give the root of the project to install into"; fi
  project=$(cd -P "$project" && pwd) || die E_ARG_INVALID "cannot enter $project" "check its permissions"
else
  if [[ -z ${HOME:-} ]]; then die E_ARG_INVALID "HOME is not set" "set HOME, or use --scope project"; fi
fi

skills_dir() { # harness → the folder holding skill folders
  case "$1/$scope" in
    claude/project) printf '%s' "$project/.claude/skills" ;;
    claude/user) printf '%s' "${CLAUDE_CONFIG_DIR:-$HOME/.claude}/skills" ;;
    opencode/project) printf '%s' "$project/.opencode/skills" ;;
    opencode/user) printf '%s' "${XDG_CONFIG_HOME:-$HOME/.config}/opencode/skills" ;;
    codex/project) printf '%s' "$project/.agents/skills" ;;
    codex/user) printf '%s' "$HOME/.agents/skills" ;;
    copilot/project) printf '%s' "$project/.github/skills" ;;
    copilot/user) printf '%s' "${COPILOT_HOME:-$HOME/.copilot}/skills" ;;
    gemini/project) printf '%s' "$project/.gemini/skills" ;;
    gemini/user) printf '%s' "${GEMINI_CLI_HOME:-$HOME}/.gemini/skills" ;;
    qwen/project) printf '%s' "$project/.qwen/skills" ;;
    qwen/user) printf '%s' "${QWEN_HOME:-$HOME/.qwen}/skills" ;;
  esac
}

# Whether $1 (a path that exists or is a link) is this skill: a link whose target is gone, or a folder
# (or link to one) whose SKILL.md front matter says `name: subagents`.
is_ours() {
  local t=$1 line n=0
  if [[ -L $t && ! -e $t ]]; then return 0; fi
  [[ -f $t/SKILL.md ]] || return 1
  while IFS= read -r line || [[ -n $line ]]; do
    n=$((n + 1))
    if ((n == 1)); then [[ $line == '---' ]] || return 1; continue; fi
    [[ $line == '---' ]] && return 1
    [[ $line =~ ^name:[[:space:]]*[\"\']?subagents[\"\']?[[:space:]]*$ ]] && return 0
    ((n > 50)) && return 1
  done <"$t/SKILL.md"
  return 1
}

# Assembles the new folder (or link) beside its place, then swaps it in: a failed copy never costs the
# old install. Every step is checked (set -e does not hold inside a command substitution).
put_in_place() { # dir tmp target
  mkdir -p -- "$1" || return 1
  rm -rf -- "$2" || return 1
  if [[ -n $link ]]; then
    ln -s -- "$src" "$2" || return 1
  else
    cp -R -- "$src" "$2" || return 1
  fi
  rm -rf -- "$3" || return 1
  mv -- "$2" "$3"
}

# --- do it ---------------------------------------------------------------------------------------------

status=0

for h in "${harnesses[@]}"; do
  mode=$([[ -n $link ]] && echo link || echo copy)
  dir=$(skills_dir "$h")
  target=$dir/subagents
  where=",\"harness\":$(json_str "$h"),\"scope\":$(json_str "$scope"),\"path\":$(json_str "$target/SKILL.md")"
  exists=''
  if [[ -e $target || -L $target ]]; then exists=1; fi

  if [[ -n $exists ]] && ! is_ours "$target"; then
    fail_line E_TARGET_EXISTS "$target exists and is not the subagents skill" "move it away or remove it yourself; nothing was changed" "$where"
    status=1
    continue
  fi

  if [[ -n $uninstall ]]; then
    action=$([[ -n $exists ]] && echo removed || echo absent)
    mode=copy
    if [[ -L $target ]]; then mode=link; fi
    if [[ -z $dry && -n $exists ]]; then
      if ! rm -rf -- "$target" 2>/dev/null; then
        fail_line E_WRITE_FAILED "cannot remove $target" "check the permissions of $dir" "$where"
        status=1
        continue
      fi
    fi
  else
    action=$([[ -n $exists ]] && echo updated || echo installed)
    if [[ -z $dry ]]; then
      tmp=$dir/.subagents.tmp.$$
      if ! err=$(put_in_place "$dir" "$tmp" "$target" 2>&1); then
        rm -rf -- "$tmp" 2>/dev/null
        fail_line E_WRITE_FAILED "cannot install into $dir: ${err%%$'\n'*}" "check that $dir is writable" "$where"
        status=1
        continue
      fi
    fi
  fi
  printf '{"ok":true%s,"action":%s,"mode":%s,"dryRun":%s}\n' "$where" "$(json_str "$action")" "$(json_str "$mode")" "$([[ -n $dry ]] && echo true || echo false)"
done

exit $status
