/*
 * ctfnames.c - the LTTng tracepoint names of the .NET runtime's events (provider
 * Microsoft-Windows-DotNETRuntime, LTTng provider DotNETRuntime) by event id and version: the
 * names perfcollect's traces carry and TraceEvent 4.0.0 maps back to its CLR parsers, and the
 * fields of those lttng-ust declares one by one.  An event without a name here is one TraceEvent
 * cannot read from CTF.  Laying out the CTF is ctf.c's.
 */
#include <stddef.h>
#include "formats/ctf.h"

/* (id, version, name, fields), by id then version: TraceEvent's list of the CLR provider's LTTng
 * events (a few ids carry the names of older events of the same id: DCStartCompleteV2, ...), and
 * for those whose fields are integers only, the fields as lttng-ust declares them (perfcollect's
 * metadata), "u32:Count" for an unsigned 32-bit _Count; NULL: packed (strings, arrays, structs) */
static const struct pfc_ctf_name names[] = {
	{ 1, 0, "GCStart", "u32:Count u32:Reason" },
	{ 1, 1, "GCStart_V1", "u32:Count u32:Depth u32:Reason u32:Type u16:ClrInstanceID" },
	{ 1, 2, "GCStart_V2", "u32:Count u32:Depth u32:Reason u32:Type u16:ClrInstanceID u64:ClientSequenceNumber" },
	{ 2, 0, "GCEnd", "u32:Count u16:Depth" },
	{ 2, 1, "GCEnd_V1", "u32:Count u32:Depth u16:ClrInstanceID" },
	{ 3, 0, "GCRestartEEEnd", "" },
	{ 3, 1, "GCRestartEEEnd_V1", "u16:ClrInstanceID" },
	{ 4, 0, "GCHeapStats", NULL },
	{ 4, 1, "GCHeapStats_V1", NULL },
	{ 5, 0, "GCCreateSegment", "u64:Address u64:Size u32:Type" },
	{ 5, 1, "GCCreateSegment_V1", "u64:Address u64:Size u32:Type u16:ClrInstanceID" },
	{ 6, 0, "GCFreeSegment", "u64:Address" },
	{ 6, 1, "GCFreeSegment_V1", "u64:Address u16:ClrInstanceID" },
	{ 7, 0, "GCRestartEEBegin", "" },
	{ 7, 1, "GCRestartEEBegin_V1", "u16:ClrInstanceID" },
	{ 8, 0, "GCSuspendEEEnd", "" },
	{ 8, 1, "GCSuspendEEEnd_V1", "u16:ClrInstanceID" },
	{ 9, 0, "GCSuspendEEBegin", "u16:Reason" },
	{ 9, 1, "GCSuspendEEBegin_V1", "u32:Reason u32:Count u16:ClrInstanceID" },
	{ 10, 0, "GCAllocationTick", "u32:AllocationAmount u32:AllocationKind" },
	{ 10, 1, "GCAllocationTick_V1", "u32:AllocationAmount u32:AllocationKind u16:ClrInstanceID" },
	{ 10, 2, "GCAllocationTick_V2", NULL },
	{ 10, 3, "GCAllocationTick_V3", NULL },
	{ 11, 0, "GCCreateConcurrentThread", "" },
	{ 11, 1, "GCCreateConcurrentThread_V1", "u16:ClrInstanceID" },
	{ 12, 0, "GCTerminateConcurrentThread", "" },
	{ 12, 1, "GCTerminateConcurrentThread_V1", "u16:ClrInstanceID" },
	{ 13, 0, "GCFinalizersEnd", "u32:Count" },
	{ 13, 1, "GCFinalizersEnd_V1", "u32:Count u16:ClrInstanceID" },
	{ 14, 0, "GCFinalizersBegin", "" },
	{ 14, 1, "GCFinalizersBegin_V1", "u16:ClrInstanceID" },
	{ 15, 0, "BulkType", NULL },
	{ 16, 0, "GCBulkRootEdge", NULL },
	{ 17, 0, "GCBulkRootConditionalWeakTableElementEdge", NULL },
	{ 18, 0, "GCBulkNode", NULL },
	{ 19, 0, "GCBulkEdge", NULL },
	{ 20, 0, "GCSampledObjectAllocationHigh", NULL },
	{ 21, 0, "GCBulkSurvivingObjectRanges", NULL },
	{ 22, 0, "GCBulkMovedObjectRanges", NULL },
	{ 23, 0, "GCGenerationRange", NULL },
	{ 25, 0, "GCMarkStackRoots", "u32:HeapNum u16:ClrInstanceID" },
	{ 26, 0, "GCMarkFinalizeQueueRoots", "u32:HeapNum u16:ClrInstanceID" },
	{ 27, 0, "GCMarkHandles", "u32:HeapNum u16:ClrInstanceID" },
	{ 28, 0, "GCMarkOlderGenerationRoots", "u32:HeapNum u16:ClrInstanceID" },
	{ 29, 0, "FinalizeObject", "u64:TypeID u64:ObjectID u16:ClrInstanceID" },
	{ 30, 0, "SetGCHandle", NULL },
	{ 31, 0, "DestroyGCHandle", NULL },
	{ 32, 0, "GCSampledObjectAllocationLow", NULL },
	{ 33, 0, "PinObjectAtGCTime", NULL },
	{ 35, 0, "GCTriggered", "u32:Reason u16:ClrInstanceID" },
	{ 36, 0, "GCBulkRootCCW", NULL },
	{ 37, 0, "GCBulkRCW", NULL },
	{ 38, 0, "GCBulkRootStaticVar", NULL },
	{ 40, 0, "WorkerThreadCreate", "u32:WorkerThreadCount u32:RetiredWorkerThreads" },
	{ 41, 0, "WorkerThreadTerminate", "u32:WorkerThreadCount u32:RetiredWorkerThreads" },
	{ 42, 0, "WorkerThreadRetire", "u32:WorkerThreadCount u32:RetiredWorkerThreads" },
	{ 43, 0, "WorkerThreadUnretire", "u32:WorkerThreadCount u32:RetiredWorkerThreads" },
	{ 44, 0, "IOThreadCreate", "u32:IOThreadCount u32:RetiredIOThreads" },
	{ 44, 1, "IOThreadCreate_V1", "u32:IOThreadCount u32:RetiredIOThreads u16:ClrInstanceID" },
	{ 45, 0, "IOThreadTerminate", "u32:IOThreadCount u32:RetiredIOThreads" },
	{ 45, 1, "IOThreadTerminate_V1", "u32:IOThreadCount u32:RetiredIOThreads u16:ClrInstanceID" },
	{ 46, 0, "IOThreadRetire", "u32:IOThreadCount u32:RetiredIOThreads" },
	{ 46, 1, "IOThreadRetire_V1", "u32:IOThreadCount u32:RetiredIOThreads u16:ClrInstanceID" },
	{ 47, 0, "IOThreadUnretire", "u32:IOThreadCount u32:RetiredIOThreads" },
	{ 47, 1, "IOThreadUnretire_V1", "u32:IOThreadCount u32:RetiredIOThreads u16:ClrInstanceID" },
	{ 48, 0, "ThreadpoolSuspensionSuspendThread", "u32:ClrThreadID u32:CpuUtilization" },
	{ 49, 0, "ThreadpoolSuspensionResumeThread", "u32:ClrThreadID u32:CpuUtilization" },
	{ 50, 0, "ThreadPoolWorkerThreadStart", "u32:ActiveWorkerThreadCount u32:RetiredWorkerThreadCount u16:ClrInstanceID" },
	{ 51, 0, "ThreadPoolWorkerThreadStop", "u32:ActiveWorkerThreadCount u32:RetiredWorkerThreadCount u16:ClrInstanceID" },
	{ 52, 0, "ThreadPoolWorkerThreadRetirementStart", "u32:ActiveWorkerThreadCount u32:RetiredWorkerThreadCount u16:ClrInstanceID" },
	{ 53, 0, "ThreadPoolWorkerThreadRetirementStop", "u32:ActiveWorkerThreadCount u32:RetiredWorkerThreadCount u16:ClrInstanceID" },
	{ 54, 0, "ThreadPoolWorkerThreadAdjustmentSample", NULL },
	{ 55, 0, "ThreadPoolWorkerThreadAdjustmentAdjustment", NULL },
	{ 56, 0, "ThreadPoolWorkerThreadAdjustmentStats", NULL },
	{ 57, 0, "ThreadPoolWorkerThreadWait", "u32:ActiveWorkerThreadCount u32:RetiredWorkerThreadCount u16:ClrInstanceID" },
	{ 60, 0, "ThreadPoolWorkingThreadCount", "u32:Count u16:ClrInstanceID" },
	{ 61, 0, "ThreadPoolEnqueue", "u64:WorkID u16:ClrInstanceID" },
	{ 62, 0, "ThreadPoolDequeue", "u64:WorkID u16:ClrInstanceID" },
	{ 63, 0, "ThreadPoolIOEnqueue", "u64:NativeOverlapped u64:Overlapped s32:MultiDequeues u16:ClrInstanceID" },
	{ 64, 0, "ThreadPoolIODequeue", "u64:NativeOverlapped u64:Overlapped u16:ClrInstanceID" },
	{ 65, 0, "ThreadPoolIOPack", "u64:NativeOverlapped u64:Overlapped u16:ClrInstanceID" },
	{ 70, 0, "ThreadCreating", "u64:ID u16:ClrInstanceID" },
	{ 71, 0, "ThreadRunning", "u64:ID u16:ClrInstanceID" },
	{ 72, 0, "MethodDetails", NULL },
	{ 80, 0, "ExceptionThrown", "" },
	{ 80, 1, "ExceptionThrown_V1", NULL },
	{ 81, 0, "Contention", "" },
	{ 81, 1, "ContentionStart_V1", "u8:ContentionFlags u16:ClrInstanceID" },
	{ 81, 2, "ContentionStart_V2", NULL },
	{ 82, 0, "CLRStackWalk", NULL },
	{ 83, 0, "AppDomainMemAllocated", NULL },
	{ 84, 0, "AppDomainMemSurvived", NULL },
	{ 85, 0, "ThreadCreated", NULL },
	{ 86, 0, "ThreadTerminated", NULL },
	{ 87, 0, "ThreadDomainEnter", NULL },
	{ 88, 0, "ILStubGenerated", NULL },
	{ 89, 0, "ILStubCacheHit", NULL },
	{ 90, 0, "LockCreated", NULL },
	{ 91, 0, "ContentionStop", "u8:ContentionFlags u16:ClrInstanceID" },
	{ 91, 1, "ContentionStop_V1", NULL },
	{ 135, 0, "DCStartCompleteV2", "" },
	{ 136, 0, "DCEndCompleteV2", "" },
	{ 137, 0, "MethodDCStartV2", "u64:MethodID u64:ModuleID u64:MethodStartAddress u32:MethodSize u32:MethodToken u32:MethodFlags" },
	{ 138, 0, "MethodDCEndV2", "u64:MethodID u64:ModuleID u64:MethodStartAddress u32:MethodSize u32:MethodToken u32:MethodFlags" },
	{ 139, 0, "MethodDCStartVerboseV2", NULL },
	{ 140, 0, "MethodDCEndVerboseV2", NULL },
	{ 141, 0, "MethodLoad", "u64:MethodID u64:ModuleID u64:MethodStartAddress u32:MethodSize u32:MethodToken u32:MethodFlags" },
	{ 141, 1, "MethodLoad_V1", "u64:MethodID u64:ModuleID u64:MethodStartAddress u32:MethodSize u32:MethodToken u32:MethodFlags u16:ClrInstanceID" },
	{ 141, 2, "MethodLoad_V2", "u64:MethodID u64:ModuleID u64:MethodStartAddress u32:MethodSize u32:MethodToken u32:MethodFlags u16:ClrInstanceID u64:ReJITID" },
	{ 142, 0, "MethodUnload", "u64:MethodID u64:ModuleID u64:MethodStartAddress u32:MethodSize u32:MethodToken u32:MethodFlags" },
	{ 142, 1, "MethodUnload_V1", "u64:MethodID u64:ModuleID u64:MethodStartAddress u32:MethodSize u32:MethodToken u32:MethodFlags u16:ClrInstanceID" },
	{ 142, 2, "MethodUnload_V2", "u64:MethodID u64:ModuleID u64:MethodStartAddress u32:MethodSize u32:MethodToken u32:MethodFlags u16:ClrInstanceID u64:ReJITID" },
	{ 143, 0, "MethodLoadVerbose", NULL },
	{ 143, 1, "MethodLoadVerbose_V1", NULL },
	{ 143, 2, "MethodLoadVerbose_V2", NULL },
	{ 144, 0, "MethodUnloadVerbose", NULL },
	{ 144, 1, "MethodUnloadVerbose_V1", NULL },
	{ 144, 2, "MethodUnloadVerbose_V2", NULL },
	{ 145, 0, "MethodJittingStarted", NULL },
	{ 145, 1, "MethodJittingStarted_V1", NULL },
	{ 149, 0, "ModuleDCStartV2", NULL },
	{ 150, 0, "ModuleDCEndV2", NULL },
	{ 151, 0, "DomainModuleLoad", NULL },
	{ 151, 1, "DomainModuleLoad_V1", NULL },
	{ 152, 0, "ModuleLoad", NULL },
	{ 152, 1, "ModuleLoad_V1", NULL },
	{ 152, 2, "ModuleLoad_V2", NULL },
	{ 153, 0, "ModuleUnload", NULL },
	{ 153, 1, "ModuleUnload_V1", NULL },
	{ 153, 2, "ModuleUnload_V2", NULL },
	{ 154, 0, "AssemblyLoad", NULL },
	{ 154, 1, "AssemblyLoad_V1", NULL },
	{ 155, 0, "AssemblyUnload", NULL },
	{ 155, 1, "AssemblyUnload_V1", NULL },
	{ 156, 0, "AppDomainLoad", NULL },
	{ 156, 1, "AppDomainLoad_V1", NULL },
	{ 157, 0, "AppDomainUnload", NULL },
	{ 157, 1, "AppDomainUnload_V1", NULL },
	{ 158, 0, "ModuleRangeLoad", NULL },
	{ 181, 0, "StrongNameVerificationStart", NULL },
	{ 181, 1, "StrongNameVerificationStart_V1", NULL },
	{ 182, 0, "StrongNameVerificationStop", NULL },
	{ 182, 1, "StrongNameVerificationStop_V1", NULL },
	{ 183, 0, "AuthenticodeVerificationStart", NULL },
	{ 183, 1, "AuthenticodeVerificationStart_V1", NULL },
	{ 184, 0, "AuthenticodeVerificationStop", NULL },
	{ 184, 1, "AuthenticodeVerificationStop_V1", NULL },
	{ 185, 0, "MethodJitInliningSucceeded", NULL },
	{ 186, 0, "MethodJitInliningFailed", NULL },
	{ 187, 0, "RuntimeInformationStart", NULL },
	{ 188, 0, "MethodJitTailCallSucceeded", NULL },
	{ 189, 0, "MethodJitTailCallFailed", NULL },
	{ 190, 0, "MethodILToNativeMap", NULL },
	{ 190, 1, "MethodILToNativeMap_V1", NULL },
	{ 200, 0, "IncreaseMemoryPressure", "u64:BytesAllocated u16:ClrInstanceID" },
	{ 201, 0, "DecreaseMemoryPressure", "u64:BytesFreed u16:ClrInstanceID" },
	{ 202, 0, "GCMarkWithType", "u32:HeapNum u16:ClrInstanceID u32:Type u64:Bytes" },
	{ 203, 2, "GCJoin_V2", "u32:Heap u32:JoinTime u32:JoinType u16:ClrInstanceID u32:JoinID" },
	{ 204, 3, "GCPerHeapHistory_V3", NULL },
	{ 205, 2, "GCGlobalHeapHistory_V2", "u64:FinalYoungestDesired s32:NumHeaps u32:CondemnedGeneration u32:Gen0ReductionCount u32:Reason u32:GlobalMechanisms u16:ClrInstanceID u32:PauseMode u32:MemoryPressure" },
	{ 240, 0, "DebugIPCEventStart", NULL },
	{ 241, 0, "DebugIPCEventEnd", NULL },
	{ 242, 0, "DebugExceptionProcessingStart", NULL },
	{ 243, 0, "DebugExceptionProcessingEnd", NULL },
	{ 250, 0, "ExceptionCatchStart", NULL },
	{ 251, 0, "ExceptionCatchStop", "" },
	{ 252, 0, "ExceptionFinallyStart", NULL },
	{ 253, 0, "ExceptionFinallyStop", "" },
	{ 254, 0, "ExceptionFilterStart", NULL },
	{ 255, 0, "ExceptionFilterStop", "" },
	{ 256, 0, "ExceptionThrownStop", "" },
	{ 260, 0, "CodeSymbols", NULL },
	{ 270, 0, "EventSource", NULL },
	{ 280, 0, "TieredCompilationSettings", "u16:ClrInstanceID u32:Flags" },
	{ 281, 0, "TieredCompilationPause", "u16:ClrInstanceID" },
	{ 282, 0, "TieredCompilationResume", "u16:ClrInstanceID u32:NewMethodCount" },
	{ 283, 0, "TieredCompilationBackgroundJitStart", "u16:ClrInstanceID u32:PendingMethodCount" },
	{ 284, 0, "TieredCompilationBackgroundJitStop", "u16:ClrInstanceID u32:PendingMethodCount u32:JittedMethodCount" },
};

/* Versions newer than the newest name above whose payload only appends fields to it, so that
 * TraceEvent reads every field of that version at the same offsets (ClrEtwAll.man):
 * GCHeapStats_V2 adds the POH's size and promoted bytes, GCAllocationTick_V4 the object's size,
 * GCGlobalHeapHistory_V3 and _V4 the pause mode, memory pressure and condemn reasons.  A version
 * after those is not known to append only, and is left out. */
static const struct { uint32_t id, newest, upto; } appended[] = {
	{ 4, 1, 2 }, { 10, 3, 4 }, { 205, 2, 4 },
};

const struct pfc_ctf_name *pfc_ctf_name_find(uint32_t id, uint32_t version, int *older)
{
	size_t i, lo = 0, hi = sizeof(names) / sizeof(names[0]);

	*older = 0;
	for (i = 0; i < sizeof(appended) / sizeof(appended[0]); i++)
		if (appended[i].id == id && version > appended[i].newest && version <= appended[i].upto) {
			version = appended[i].newest;
			*older = 1;
		}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (names[mid].id < id || (names[mid].id == id && names[mid].version < version))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < sizeof(names) / sizeof(names[0]) && names[lo].id == id && names[lo].version == version)
		return &names[lo];
	*older = 0;
	return NULL;
}
