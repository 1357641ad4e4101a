#!/bin/sh
# expect_success.sh REGEX COMMAND...: passes when COMMAND exits 0 within 60 s and prints exactly one
# line matching the extended regular expression REGEX (on stdout or stderr).
regex=$1
shift
output=$(timeout 60 "$@" 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" -ne 0 ]; then
  echo "expect_success: command failed with exit status $status"
  exit 1
fi
matches=$(printf '%s\n' "$output" | grep -cE -- "$regex")
if [ "$matches" -ne 1 ]; then
  echo "expect_success: expected exactly one line matching '$regex', found $matches"
  exit 1
fi
echo "expect_success: exit status 0 and the expected message"
