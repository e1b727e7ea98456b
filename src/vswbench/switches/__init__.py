"""Switch backends, a Switch subclass each (base.py), by family: kernel/, bpf/, ovs/, dpdk/;
chain/ the chain elements of option nf, rules/ the forwarding functions and rule updates.
catalog.py lists the backends; options.py the backend options."""
