# The manifest examples/broken/puppet-without-puppet.ts applies.
user { 'deploy':
  ensure     => present,
  managehome => true,
}
