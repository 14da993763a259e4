# label: safe
# why: the fix deep-copies every item before pushing it into the replay buffer, so overwriting the batch tensors in place with the sampled replay data no longer reaches the stored entries.
# source: https://github.com/recursionpharma/gflownet/commit/8e1163a4fbac9adfc28e286569382386dc8e738d (fix for https://github.com/recursionpharma/gflownet/issues/61)
from copy import deepcopy
from typing import List

import torch

torch.manual_seed(0)


class ReplayBuffer(object):
    def __init__(self, capacity: int = 100000, warmup: int = 0, rng: torch.Generator = None):
        self.capacity = capacity
        self.warmup = warmup
        assert self.warmup <= self.capacity, "ReplayBuffer warmup must be smaller than capacity"
        self.buffer: List[tuple] = []
        self.position = 0
        self.rng = rng

    def push(self, *args):
        if len(self.buffer) == 0:
            self._input_size = len(args)
        else:
            assert self._input_size == len(args), "ReplayBuffer input size must be constant"
        if len(self.buffer) < self.capacity:
            self.buffer.append(None)
        self.buffer[self.position] = args
        self.position = (self.position + 1) % self.capacity

    def sample(self, batch_size):
        idxs = torch.randint(len(self.buffer), (batch_size,), generator=self.rng).tolist()
        out = list(zip(*[self.buffer[idx] for idx in idxs]))
        for i in range(len(out)):
            # stack if all elements are torch tensors
            if all([isinstance(x, torch.Tensor) for x in out[i]]):
                out[i] = torch.stack(out[i], dim=0)
        return tuple(out)

    def __len__(self):
        return len(self.buffer)


class SEHTask:
    def compute_flat_rewards(self, trajs):
        return torch.stack([t['result'].sum(0, keepdim=True).sigmoid() for t in trajs]), torch.ones(len(trajs)).bool()

    def cond_info_to_logreward(self, cond_info, flat_reward):
        return flat_reward.squeeze(1).clamp(min=1e-30).log() * cond_info['beta']


class SamplingIterator:
    def __init__(self, task, replay_buffer, illegal_action_logreward=-75.):
        self.task = task
        self.replay_buffer = replay_buffer
        self.illegal_action_logreward = illegal_action_logreward

    def sample_batch(self, num_online):
        num_offline = 0
        cond_info = {'beta': torch.full((num_online,), 32.), 'encoding': torch.randn(num_online, 3)}
        trajs = [{'result': torch.randn(4), 'is_valid': True} for _ in range(num_online)]
        is_valid = torch.ones(num_offline + num_online).bool()
        flat_rewards, m_is_valid = self.task.compute_flat_rewards(trajs)
        is_valid[num_offline:] = m_is_valid

        log_rewards = self.task.cond_info_to_logreward(cond_info, flat_rewards)
        log_rewards[torch.logical_not(is_valid)] = self.illegal_action_logreward

        if self.replay_buffer is not None:
            cond_info = [{k: v[i] for k, v in cond_info.items()} for i in range(num_offline + num_online)]

            # push the online trajectories in the replay buffer and sample a new 'online' batch
            for i in range(num_offline, len(trajs)):
                self.replay_buffer.push(deepcopy(trajs[i]), deepcopy(log_rewards[i]), deepcopy(flat_rewards[i]),
                                        deepcopy(cond_info[i]), deepcopy(is_valid[i]))
            replay_trajs, replay_logr, replay_fr, replay_condinfo, replay_valid = \
                self.replay_buffer.sample(num_online)

            # append the online trajectories to the offline ones
            trajs[num_offline:] = replay_trajs
            log_rewards[num_offline:] = replay_logr
            flat_rewards[num_offline:] = replay_fr
            cond_info[num_offline:] = replay_condinfo
            is_valid[num_offline:] = replay_valid

            cond_info = {k: torch.stack([d[k] for d in cond_info]) for k in cond_info[0]}
        return trajs, log_rewards, flat_rewards, cond_info, is_valid


replay_buffer = ReplayBuffer(capacity=50, rng=torch.Generator().manual_seed(142857))
iterator = SamplingIterator(SEHTask(), replay_buffer)
batches = [iterator.sample_batch(num_online=4) for _ in range(3)]

# what the buffer now believes each stored trajectory earned
buffer_log_rewards = torch.stack([entry[1] for entry in replay_buffer.buffer])
buffer_flat_rewards = torch.stack([entry[2] for entry in replay_buffer.buffer])
true_flat_rewards = torch.stack([entry[0]['result'].sum(0, keepdim=True).sigmoid() for entry in replay_buffer.buffer])
