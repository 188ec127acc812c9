// expect: IMGC0013 line 17 (also a type error)
// exit: 1
// One mistake, one diagnostic: the contract checker's, saying TypeScript saw it too.
// The gpu user exists only when the gpu variable is true, but the file
// owned by it is written whatever the value: on a node without GPUs the
// step fails. (The types catch this too.) Put the file in the same
// when(...) block.
import { debian12, image, variable, z } from 'imgc';

const gpu = variable('gpu', z.boolean(), { default: false, description: 'the node has GPUs' });

export default image('met-on-one-branch')
  .base(debian12())
  .provision((p) =>
    p
      .when(gpu, (p) => p.user('gpu', { system: true }))
      .file('/etc/gpu-owner.conf', { owner: 'gpu', mode: '0640', content: 'x\n' }),
  );
