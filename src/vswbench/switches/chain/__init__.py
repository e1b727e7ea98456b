"""A chain's network functions when they are not engines (backend option nf): nf.py the option
and its checks, router.py the kernel-routing elements, ovs.py the OVS-bridge elements."""
