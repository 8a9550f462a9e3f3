// The Transport of cluster runs on MPI: one process per task, started by
// mpirun (or srun). libmpi is reached through a plugin loaded on first use
// (mpi_plugin.h), as cuBLAS is, so plain runs never load it and the binary
// runs where OpenMPI is not installed.
#pragma once

#include <memory>

#include "core/base/status.h"
#include "core/runtime/transport.h"

namespace tfrun {

// What the launcher's environment says, read before MPI is initialised:
// OpenMPI's OMPI_COMM_WORLD_*, the PMI_* of MPICH and Slurm, or srun's
// SLURM_PROCID/SLURM_NTASKS.
struct MpiLaunch {
  bool launched = false;
  int rank = 0;
  int size = 1;
};
MpiLaunch DetectMpiLaunch();

// Loads the plugin and initialises MPI.
StatusOr<std::unique_ptr<Transport>> StartMpiTransport();

}  // namespace tfrun
