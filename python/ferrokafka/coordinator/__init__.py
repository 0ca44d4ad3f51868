"""Consumer-group building blocks with aiokafka's module paths: the ConsumerProtocol encoding
(``protocol``) and the partition assignors (``assignors``). Pure logic, no I/O."""
