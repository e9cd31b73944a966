/**
 * The key a repository name is compared by: `host/owner/name` without regard to letter case, as
 * GitHub, GitLab and Bitbucket compare owners and names (and DNS hosts), so `github.com/ACME/Web`
 * in the file and Trunk's `github.com/acme/web` are one repository. Series keep the name as spelled.
 */
export function repositoryKey(name: string): string {
  return name.toLowerCase();
}
