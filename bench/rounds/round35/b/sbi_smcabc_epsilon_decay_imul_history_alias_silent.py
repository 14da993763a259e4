# label: hazard silent
# why: SMCABC.__call__ stores the initial epsilon (a 0-d tensor taken from the sorted distances) in `all_epsilons` and then decays it with `epsilon *= epsilon_decay`; every entry of the epsilon history is the same tensor, so the returned summary reports the final threshold for every population.
# source: https://github.com/sbi-dev/sbi/commit/825332d2387fc28f76087fc9a73f3aa03fc365bb
import logging
from typing import Tuple

import torch
from torch import Tensor, ones
from torch.distributions import MultivariateNormal

torch.manual_seed(0)


class ABCBASE:
    def __init__(self, simulator, prior, distance="l2", num_workers=1, simulation_batch_size=1):
        self.prior = prior
        self._simulator = simulator
        self.num_workers = num_workers
        self.logger = logging.getLogger(__name__)
        self.simulation_batch_size = simulation_batch_size
        self.distance = self.get_distance_function(distance)
        self.simulation_counter = 0

    @staticmethod
    def get_distance_function(distance_type="l2"):
        if distance_type == "l2":
            def distance(xo, x):
                return torch.norm(xo - x, dim=-1)
        else:
            raise NotImplementedError(distance_type)
        return distance

    def _batched_simulator(self, theta: Tensor) -> Tensor:
        self.simulation_counter += theta.shape[0]
        return self._simulator(theta)


class SMCABC(ABCBASE):
    def __init__(self, simulator, prior, distance="l2", kernel="gaussian"):
        super().__init__(simulator=simulator, prior=prior, distance=distance)
        self.kernel = kernel
        self.kernel_variance = None
        self.num_simulations = 0

    def __call__(self, x_o, num_particles, num_initial_pop, num_simulations, epsilon_decay,
                 distance_based_decay=False, kernel_variance_scale=1.0, use_last_pop_samples=True,
                 return_summary=True):
        pop_idx = 0
        self.num_simulations = num_simulations
        self._simulate_with_budget = self._batched_simulator

        # run initial population
        particles, epsilon, distances, x = self._set_xo_and_sample_initial_population(
            x_o, num_particles, num_initial_pop
        )
        log_weights = torch.log(1 / num_particles * ones(num_particles))

        all_particles = [particles]
        all_log_weights = [log_weights]
        all_distances = [distances]
        all_epsilons = [epsilon]
        all_x = [x]

        while self.simulation_counter < self.num_simulations:
            pop_idx += 1
            # Decay based on quantile of distances from previous pop.
            if distance_based_decay:
                epsilon = self._get_next_epsilon(all_distances[pop_idx - 1], epsilon_decay)
            # Constant decay.
            else:
                epsilon *= epsilon_decay  # <-- IPL002

            # Get kernel variance from previous pop.
            self.kernel_variance = self.get_kernel_variance(
                all_particles[pop_idx - 1],
                torch.exp(all_log_weights[pop_idx - 1]),
                kernel_variance_scale=kernel_variance_scale,
            )
            particles, log_weights, distances, x = self._sample_next_population(
                particles=all_particles[pop_idx - 1],
                log_weights=all_log_weights[pop_idx - 1],
                distances=all_distances[pop_idx - 1],
                epsilon=epsilon,
                x=all_x[pop_idx - 1],
                use_last_pop_samples=use_last_pop_samples,
            )

            # collect results
            all_particles.append(particles)
            all_log_weights.append(log_weights)
            all_distances.append(distances)
            all_epsilons.append(epsilon)
            all_x.append(x)

        posterior_mean = (torch.exp(all_log_weights[-1])[:, None] * all_particles[-1]).sum(0)
        if return_summary:
            return posterior_mean, dict(
                particles=all_particles,
                weights=all_log_weights,
                epsilons=all_epsilons,
                distances=all_distances,
                xs=all_x,
            )
        return posterior_mean

    def _set_xo_and_sample_initial_population(self, x_o, num_particles: int, num_initial_pop: int) -> Tuple[Tensor, float, Tensor, Tensor]:
        """Return particles, epsilon and distances of initial population."""
        assert num_particles <= num_initial_pop, "number of initial round simulations must be greater than population size"

        theta = self.prior.sample((num_initial_pop,))
        x = self._simulate_with_budget(theta)

        self.x_shape = x[0].unsqueeze(0).shape
        self.x_o = x_o.reshape(self.x_shape)

        distances = self.distance(self.x_o, x)
        sortidx = torch.argsort(distances)
        particles = theta[sortidx][:num_particles]
        # Take last accepted distance as epsilon.
        initial_epsilon = distances[sortidx][num_particles - 1]

        if not torch.isfinite(initial_epsilon):
            initial_epsilon = 1e8

        return (
            particles,
            initial_epsilon,
            distances[sortidx][:num_particles],
            x[sortidx][:num_particles],
        )

    def _sample_next_population(self, particles, log_weights, distances, epsilon, x, use_last_pop_samples=True):
        """Return particles, weights and distances of new population."""
        new_particles = []
        new_log_weights = []
        new_distances = []
        new_x = []

        num_accepted_particles = 0
        num_particles = particles.shape[0]

        while num_accepted_particles < num_particles:
            num_batch = min(num_particles - num_accepted_particles, self.num_simulations - self.simulation_counter)

            # Sample from previous population and perturb.
            particle_candidates = self._sample_and_perturb(particles, torch.exp(log_weights), num_samples=num_batch)
            # Simulate and select based on distance.
            x_candidates = self._simulate_with_budget(particle_candidates)
            dists = self.distance(self.x_o, x_candidates)
            is_accepted = dists <= epsilon
            num_accepted_batch = is_accepted.sum().item()

            if num_accepted_batch > 0:
                new_particles.append(particle_candidates[is_accepted])
                new_log_weights.append(
                    self._calculate_new_log_weights(particle_candidates[is_accepted], particles, log_weights)
                )
                new_distances.append(dists[is_accepted])
                new_x.append(x_candidates[is_accepted])
                num_accepted_particles += num_accepted_batch

            # If simulation budget was exceeded and we still need particles, take
            # previous population or fill up with previous population.
            if self.simulation_counter >= self.num_simulations and num_accepted_particles < num_particles:
                if use_last_pop_samples:
                    num_remaining = num_particles - num_accepted_particles
                    new_particles.append(particles[:num_remaining, :])
                    new_log_weights = [
                        self._calculate_new_log_weights(torch.cat(new_particles), particles, log_weights)
                    ]
                    new_distances.append(distances[:num_remaining])
                    new_x.append(x[:num_remaining])
                else:
                    new_particles = [particles]
                    new_log_weights = [log_weights]
                    new_distances = [distances]
                    new_x = [x]
                break

        new_particles = torch.cat(new_particles)
        new_log_weights = torch.cat(new_log_weights)
        new_distances = torch.cat(new_distances)
        new_x = torch.cat(new_x)

        # normalize the new weights
        new_log_weights -= torch.logsumexp(new_log_weights, dim=0)

        # Return sorted wrt distances.
        sort_idx = torch.argsort(new_distances)
        return (
            new_particles[sort_idx],
            new_log_weights[sort_idx],
            new_distances[sort_idx],
            new_x[sort_idx],
        )

    def _get_next_epsilon(self, distances: Tensor, quantile: float) -> float:
        distances = torch.unique(distances)
        distances_cdf = torch.cumsum(distances, dim=0) / distances.sum()
        try:
            qidx = torch.where(distances_cdf >= quantile)[0][0]
        except IndexError:
            qidx = -1
        return distances[qidx].item()

    def _calculate_new_log_weights(self, new_particles, old_particles, old_log_weights):
        prior_log_probs = self.prior.log_prob(new_particles)

        def kernel_log_prob(new_particle):
            return self.get_new_kernel(old_particles).log_prob(new_particle)

        log_weighted_sum = torch.tensor(
            [torch.logsumexp(old_log_weights + kernel_log_prob(new_particle), dim=0) for new_particle in new_particles],
            dtype=torch.float32,
        )
        return prior_log_probs - log_weighted_sum

    def _sample_and_perturb(self, particles, weights, num_samples=1):
        num_accepted = 0
        parameters = []
        while num_accepted < num_samples:
            parms = particles[torch.multinomial(weights, num_samples - num_accepted, replacement=True)]
            parms_perturbed = self.get_new_kernel(parms).sample()
            is_within_prior = torch.isfinite(self.prior.log_prob(parms_perturbed))
            num_accepted += int(is_within_prior.sum().item())
            if num_accepted > 0:
                parameters.append(parms_perturbed[is_within_prior])
        return torch.cat(parameters)

    def get_kernel_variance(self, particles, weights, kernel_variance_scale=1.0):
        mean = (weights[:, None] * particles).sum(0)
        centered = particles - mean
        population_cov = (weights[:, None, None] * centered[:, :, None] * centered[:, None, :]).sum(0)
        return kernel_variance_scale * population_cov + 1e-4 * torch.eye(particles.shape[1])

    def get_new_kernel(self, thetas):
        if self.kernel == "gaussian":
            return MultivariateNormal(loc=thetas, covariance_matrix=self.kernel_variance)
        raise NotImplementedError(self.kernel)


def linear_gaussian(theta):
    return theta + 0.1 * torch.randn_like(theta)


prior = MultivariateNormal(loc=torch.zeros(2), covariance_matrix=torch.eye(2))
inferer = SMCABC(linear_gaussian, prior, distance="l2")
x_o = torch.tensor([0.5, -0.3])
posterior_mean, summary = inferer(
    x_o, num_particles=20, num_initial_pop=100, num_simulations=400, epsilon_decay=0.8
)
epsilons = torch.stack([torch.as_tensor(e) for e in summary["epsilons"]])
final_distances = summary["distances"][-1]
