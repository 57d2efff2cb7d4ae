# Sourced by the tests that run under every CPython 3.10-3.13 pyenv has: fills the array
# pythons with the newest interpreter of each minor version found (pythonM.N under pyenv's
# root), saying which are missing; the caller skips when it is empty.
pythons=()
pyenv_root=$(pyenv root 2>/dev/null) || pyenv_root=$HOME/.pyenv
for v in 3.10 3.11 3.12 3.13; do
	p=$(ls -d "$pyenv_root"/versions/$v.*/bin/python$v 2>/dev/null | sort -V | tail -1)
	if [ -n "$p" ] && [ -x "$p" ]; then
		pythons+=("$p")
	else
		echo "skip: no pyenv CPython $v under $pyenv_root/versions"
	fi
done
