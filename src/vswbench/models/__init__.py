"""The papers' models: the NF-chain cost model (Raumer et al.), the empirical delay model (Sattar
and Matrawy), parameter error bars (Fang et al.)."""
