// Imported first by the evaluation process: zod is told to skip its generated
// fast path before any schema is made (it reads the setting then). One process
// parses the IR once, and generating the code (~15 ms for the IR's schema)
// costs more than it saves.
import { z } from '../util/zod.js';

z.config({ jitless: true });
