/// @file collectives.h
/// @brief Index of the generated headers in this folder (hand-written, not
/// purlinc output): includes the host API of every collective the library
/// purlin_generated provides: purlin::gen::allGather, reduceScatter,
/// allReduce, allToAll, broadcast, reduce, scatter, gather, allGatherV,
/// reduceScatterV, allToAllV and their C ABI
/// purlin_allGather, ... .
#pragma once

#include "allgather.h"
#include "allgatherv.h"
#include "allreduce.h"
#include "alltoall.h"
#include "alltoallv.h"
#include "broadcast.h"
#include "gather.h"
#include "reduce.h"
#include "reducescatter.h"
#include "reducescatterv.h"
#include "scatter.h"
