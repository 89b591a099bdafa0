"""HAMLET's dynamic sharing optimizer (§4): the benefit model and the choice of the query set per burst."""
