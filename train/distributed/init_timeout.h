// How long MPI_Init may take to meet every rank of the job, apart from the collectives' timeout:
//   ATTN_DIST_INIT_TIMEOUT=600 ATTN_DIST_TIMEOUT=3 mpirun -np 2 attnlab train ...
// lets a loaded machine start its ranks slowly while a rank that hangs mid-run is still caught
// after 3 s (tests/cli/distributed.sh does this). Unset, MPI_Init waits ATTN_DIST_TIMEOUT.
#pragma once

namespace attn::train::distributed {

// Seconds MPI_Init waits for every rank: ATTN_DIST_INIT_TIMEOUT, default timeout_seconds().
// A value that is not a number > 0 is an attn::UsageError naming the variable.
double init_timeout_seconds();

}  // namespace attn::train::distributed
