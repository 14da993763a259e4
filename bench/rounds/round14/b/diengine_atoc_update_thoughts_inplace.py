# label: hazard raises
# why: the communication step writes integrated thoughts back into self._current_thougths[b][j] in place, but the attention unit's first Linear and the thought-distance bmm saved that tensor for backward
# source: https://github.com/opendilab/DI-engine/commit/f4bf618234660d98fdaf27a6be11213d6e772ce1
import torch
import torch.nn as nn

torch.manual_seed(0)


class ATOCAttentionUnit(nn.Module):
    def __init__(self, thought_dim, embedding_dim):
        super().__init__()
        self._act1 = nn.ReLU()
        self._fc1 = nn.Linear(thought_dim, embedding_dim)
        self._fc2 = nn.Linear(embedding_dim, embedding_dim)
        self._fc3 = nn.Linear(embedding_dim, 1)
        self._act2 = nn.Sigmoid()

    def forward(self, data):
        x = data['thought'] if isinstance(data, dict) else data
        x = self._act1(self._fc1(x))
        x = self._act1(self._fc2(x))
        return self._act2(self._fc3(x))


class ATOCCommunicationNet(nn.Module):
    def __init__(self, thought_dim):
        super().__init__()
        self._bi_lstm = nn.LSTM(thought_dim, thought_dim // 2, bidirectional=True)

    def forward(self, data):
        x = data['thoughts'] if isinstance(data, dict) else data
        out, _ = self._bi_lstm(x)
        return out


class ATOCActorNet(nn.Module):
    def __init__(self, obs_dim, thought_dim, action_dim, n_agent, m_group, T_initiate, attention_embedding_dim=16):
        super().__init__()
        self._obs_dim, self._thought_dim, self._n_agent, self._m_group = obs_dim, thought_dim, n_agent, m_group
        self._actor_1 = nn.Sequential(nn.Linear(obs_dim, thought_dim), nn.LayerNorm(thought_dim), nn.ReLU(),
                                      nn.Linear(thought_dim, thought_dim), nn.LayerNorm(thought_dim))
        self.actor_2 = nn.Sequential(nn.ReLU(), nn.Linear(thought_dim, thought_dim), nn.LayerNorm(thought_dim),
                                     nn.Linear(thought_dim, action_dim), nn.Tanh())
        self.attention = ATOCAttentionUnit(thought_dim, attention_embedding_dim)
        self._channel = ATOCCommunicationNet(thought_dim)
        self._T = T_initiate
        self._step_count = 0

    def forward(self, data):
        obs = data['obs']
        self._cur_batch_size, n_agent, obs_dim = obs.shape
        self._current_thougths = self._actor_1(obs)
        if self._step_count % self._T == 0:
            self._get_initiate_group()
        self._updata_current_thougts()
        acts = self.actor_2(self._current_thougths)
        return {'action': acts, 'initator_prob': self._init_prob, 'old_thoughts': self._old_thoughts_before_update}

    def _get_initiate_group(self):
        self._init_prob = self.attention(self._current_thougths)
        self._is_initiator = (self._init_prob > 0.4)
        thoughts_pair_dot = self._current_thougths.bmm(self._current_thougths.transpose(1, 2))
        thoughts_square = thoughts_pair_dot.diagonal(0, 1, 2)
        self._curr_thought_dists = thoughts_square.unsqueeze(1) - 2 * thoughts_pair_dot + thoughts_square.unsqueeze(2)
        self._C = torch.zeros(self._cur_batch_size, self._n_agent, self._n_agent)
        for b in range(self._cur_batch_size):
            for i in range(self._n_agent):
                if self._is_initiator[b][i]:
                    index_seq = self._curr_thought_dists[b][i].argsort()[:self._m_group]
                    self._C[b][i][index_seq] = 1

    def _updata_current_thougts(self):
        self._old_thoughts_before_update = self._current_thougths.clone().detach()
        for b in range(self._cur_batch_size):
            for i in range(self._n_agent):
                if self._is_initiator[b][i]:
                    thoughts_to_commute = []
                    for j in range(self._n_agent):
                        if self._C[b][i][j]:
                            thoughts_to_commute.append(self._current_thougths[b][j])
                    thoughts_to_commute = torch.stack(thoughts_to_commute)
                    integrated_thoughts = self._channel(thoughts_to_commute.unsqueeze(1)).squeeze(1)
                    j_count = 0
                    for j in range(self._n_agent):
                        if self._C[b][i][j]:
                            self._current_thougths[b][j] = self._merge_2_thoughts(  # <-- IPL001: attention fc1 and the bmm saved _current_thougths
                                self._current_thougths[b][j], integrated_thoughts[j_count]
                            )
                            j_count += 1

    def _merge_2_thoughts(self, thought1, thought2):
        return thought2


actor = ATOCActorNet(obs_dim=5, thought_dim=8, action_dim=2, n_agent=4, m_group=2, T_initiate=1)
optimizer = torch.optim.SGD(actor.parameters(), lr=0.1)
out = actor({'obs': torch.randn(2, 4, 5)})
actor_loss = -out['action'].sum() + out['initator_prob'].mean()
optimizer.zero_grad()
actor_loss.backward()
optimizer.step()
