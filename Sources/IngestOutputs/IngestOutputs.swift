import IngestCore
