"""ndrt runtime (arrays, operators, autograd): see the next layers."""
