// `npm run test:quick` (IMGC_ROOT_TESTS=0): the tests that build or converge
// real roots (chroots, mounts, an SSH test bed; minutes each) skip, as they
// do without root. Every such gate starts with this reason.
export const rootTestsOff: string | undefined = process.env['IMGC_ROOT_TESTS'] === '0' ? 'IMGC_ROOT_TESTS=0 (npm run test:quick)' : undefined;
