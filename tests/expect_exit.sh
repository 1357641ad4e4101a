#!/bin/sh
# expect_exit.sh succeeds|fails REGEX COMMAND...: passes when COMMAND ends within 60 s with the expected
# outcome (exit status 0 for `succeeds`, non-zero for `fails`) and prints exactly one line matching the
# extended regular expression REGEX (on stdout or stderr). A timeout is a hang, and always a failure.
expected=$1
regex=$2
shift 2
case $expected in
  succeeds|fails) ;;
  *) echo "expect_exit: first argument must be 'succeeds' or 'fails', not '$expected'"; exit 2 ;;
esac
output=$(timeout 60 "$@" 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" -eq 124 ]; then
  echo "expect_exit: command timed out (a hang)"
  exit 1
fi
if [ "$expected" = succeeds ] && [ "$status" -ne 0 ]; then
  echo "expect_exit: command failed with exit status $status but should have succeeded"
  exit 1
fi
if [ "$expected" = fails ] && [ "$status" -eq 0 ]; then
  echo "expect_exit: command succeeded but should have failed"
  exit 1
fi
matches=$(printf '%s\n' "$output" | grep -cE -- "$regex")
if [ "$matches" -ne 1 ]; then
  echo "expect_exit: expected exactly one line matching '$regex', found $matches"
  exit 1
fi
echo "expect_exit: exit status $status and the expected message"
