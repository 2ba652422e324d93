/**
 * After each test file, its CPU pools (lib/jobs/cpu-pool.ts) are closed: Jest runs many files in
 * one worker process, where their idle threads would otherwise pile up.
 */
import { closeCpuPools } from '../../lib/jobs/cpu-pool';

afterAll(() => closeCpuPools());
