# label: safe
# why: the commit adds the agenda bias out of place (`addition = embedding_addition * multiplier; predicted_action_embedding = predicted_action_embedding + addition`), so the tanh output that TanhBackward saved is never written even when `_dropout` is the identity lambda.
# source: https://github.com/allenai/allennlp/commit/ada48af502fc057235be37c9d16252f10469d260
from typing import Dict, List, Set, Tuple

import torch
from torch.nn import Parameter
from torch.nn.modules.rnn import LSTMCell
from torch.nn.modules.linear import Linear

torch.manual_seed(0)


def masked_softmax(vector, mask):
    result = torch.nn.functional.softmax(vector * mask, dim=-1)
    result = result * mask
    return result / (result.sum(dim=-1, keepdim=True) + 1e-13)


def weighted_sum(matrix, attention):
    return attention.unsqueeze(1).bmm(matrix).squeeze(1)


class ChecklistState:
    def __init__(self, terminal_actions, checklist_target, checklist_mask, checklist) -> None:
        self.terminal_actions = terminal_actions
        self.checklist_target = checklist_target
        self.checklist_mask = checklist_mask
        self.checklist = checklist

    def update(self, action) -> 'ChecklistState':
        checklist_addition = (self.terminal_actions == action).float()
        new_checklist = self.checklist + checklist_addition
        return ChecklistState(terminal_actions=self.terminal_actions,
                              checklist_target=self.checklist_target,
                              checklist_mask=self.checklist_mask,
                              checklist=new_checklist)

    def get_balance(self) -> torch.Tensor:
        return self.checklist_mask * (self.checklist_target - self.checklist)


class RnnState:
    def __init__(self, hidden_state, memory_cell, previous_action_embedding, attended_input,
                 encoder_outputs, encoder_output_mask) -> None:
        self.hidden_state = hidden_state
        self.memory_cell = memory_cell
        self.previous_action_embedding = previous_action_embedding
        self.attended_input = attended_input
        self.encoder_outputs = encoder_outputs
        self.encoder_output_mask = encoder_output_mask


class NlvrDecoderState:
    def __init__(self, batch_indices, score, rnn_state, action_embeddings, action_indices,
                 valid_actions, checklist_state) -> None:
        self.batch_indices = batch_indices
        self.score = score
        self.rnn_state = rnn_state
        self.action_embeddings = action_embeddings
        self.action_indices = action_indices
        self.valid_actions = valid_actions
        self.checklist_state = checklist_state

    def get_valid_actions(self) -> List[List[int]]:
        return [self.valid_actions[i] for i in self.batch_indices]


class NlvrDecoderStep(torch.nn.Module):
    def __init__(self, encoder_output_dim: int, action_embedding_dim: int, dropout: float = 0.0,
                 use_coverage: bool = False) -> None:
        super(NlvrDecoderStep, self).__init__()
        output_dim = encoder_output_dim
        input_dim = output_dim
        self._input_projection_layer = Linear(output_dim + action_embedding_dim, input_dim)
        self._output_projection_layer = Linear(output_dim + encoder_output_dim, action_embedding_dim)
        if use_coverage:
            self._checklist_embedding_multiplier = Parameter(torch.FloatTensor([1.0]))
        self._decoder_cell = LSTMCell(input_dim, output_dim)
        if dropout > 0:
            self._dropout = torch.nn.Dropout(p=dropout)
        else:
            self._dropout = lambda x: x

    def take_step(self, state: NlvrDecoderState) -> Tuple[List[List[Tuple[int, torch.Tensor]]], torch.Tensor, torch.Tensor]:
        attended_sentence = torch.stack([rnn_state.attended_input for rnn_state in state.rnn_state])
        hidden_state = torch.stack([rnn_state.hidden_state for rnn_state in state.rnn_state])
        memory_cell = torch.stack([rnn_state.memory_cell for rnn_state in state.rnn_state])
        previous_action_embedding = torch.stack([rnn_state.previous_action_embedding
                                                 for rnn_state in state.rnn_state])

        decoder_input = self._input_projection_layer(torch.cat([attended_sentence, previous_action_embedding], -1))
        decoder_input = torch.tanh(decoder_input)
        hidden_state, memory_cell = self._decoder_cell(decoder_input, (hidden_state, memory_cell))

        hidden_state = self._dropout(hidden_state)
        encoder_outputs = torch.stack([state.rnn_state[0].encoder_outputs[i] for i in state.batch_indices])
        encoder_output_mask = torch.stack([state.rnn_state[0].encoder_output_mask[i] for i in state.batch_indices])
        attended_sentence = self.attend_on_sentence(hidden_state, encoder_outputs, encoder_output_mask)

        valid_actions = state.get_valid_actions()
        global_actions_to_embed: List[List[int]] = []
        local_actions: List[List[int]] = []
        for batch_index, valid_action_list in zip(state.batch_indices, valid_actions):
            global_action_list = sorted((state.action_indices[(batch_index, a)], a) for a in valid_action_list)
            global_actions_to_embed.append([g for g, _ in global_action_list])
            local_actions.append([a for _, a in global_action_list])

        action_embeddings = torch.stack([state.action_embeddings[torch.tensor(actions)]
                                         for actions in global_actions_to_embed])
        action_query = torch.cat([hidden_state, attended_sentence], dim=-1)
        predicted_action_embedding = self._output_projection_layer(action_query)
        predicted_action_embedding = self._dropout(torch.tanh(predicted_action_embedding))
        if state.checklist_state[0] is not None:
            embedding_addition = self._get_predicted_embedding_addition(state)
            addition = embedding_addition * self._checklist_embedding_multiplier
            predicted_action_embedding = predicted_action_embedding + addition
        action_logits = action_embeddings.bmm(predicted_action_embedding.unsqueeze(-1)).squeeze(-1)

        action_mask = torch.ones_like(action_logits)
        logprobs = self._get_next_state_info_with_agenda(state, local_actions, action_logits, action_mask)
        return logprobs, hidden_state, memory_cell

    @staticmethod
    def _get_predicted_embedding_addition(state: NlvrDecoderState) -> torch.Tensor:
        checklist_balances = []
        for instance_checklist_state in state.checklist_state:
            checklist_balances.append(instance_checklist_state.get_balance())
        checklist_balance = torch.stack([x for x in checklist_balances])
        global_terminal_indices: List[List[int]] = []
        for batch_index, checklist_state in zip(state.batch_indices, state.checklist_state):
            global_terminal_indices.append([])
            for terminal_index in checklist_state.terminal_actions:
                global_terminal_index = state.action_indices[(batch_index, int(terminal_index[0]))]
                global_terminal_indices[-1].append(global_terminal_index)
        terminal_indices_tensor = torch.tensor(global_terminal_indices).long()
        group_size = len(state.batch_indices)
        action_embedding_dim = state.action_embeddings.size(-1)
        num_terminals = len(global_terminal_indices[0])
        flattened_terminal_indices = terminal_indices_tensor.view(-1)
        flattened_action_embeddings = state.action_embeddings.index_select(0, flattened_terminal_indices)
        terminal_embeddings = flattened_action_embeddings.view(group_size, num_terminals, action_embedding_dim)
        checklist_balance_embeddings = terminal_embeddings * checklist_balance
        return checklist_balance_embeddings.sum(1)

    @staticmethod
    def _get_next_state_info_with_agenda(state, considered_actions, action_logits, action_mask):
        considered_action_probs = masked_softmax(action_logits, action_mask)
        all_action_logprobs: List[List[Tuple[int, torch.Tensor]]] = []
        for group_index, (instance_score, instance_probs) in enumerate(zip(state.score, considered_action_probs)):
            instance_action_logprobs: List[Tuple[int, torch.Tensor]] = []
            for action_index, action_prob in enumerate(instance_probs):
                action = considered_actions[group_index][action_index]
                if action == -1:
                    continue
                logprob = instance_score + torch.log(action_prob + 1e-13)
                instance_action_logprobs.append((action, logprob))
            all_action_logprobs.append(instance_action_logprobs)
        return all_action_logprobs

    def attend_on_sentence(self, query, encoder_outputs, encoder_output_mask):
        similarities = encoder_outputs.bmm(query.unsqueeze(-1)).squeeze(-1)
        sentence_attention_weights = masked_softmax(similarities, encoder_output_mask)
        return weighted_sum(encoder_outputs, sentence_attention_weights)


class NlvrCoverageParser(torch.nn.Module):
    def __init__(self, num_actions, embed_dim, action_embedding_dim, num_terminals):
        super().__init__()
        self._sentence_embedder = torch.nn.Embedding(30, embed_dim)
        self._encoder = torch.nn.LSTM(embed_dim, embed_dim, batch_first=True)
        self._action_embedder = torch.nn.Embedding(num_actions, action_embedding_dim)
        self._decoder_step = NlvrDecoderStep(embed_dim, action_embedding_dim, dropout=0.0, use_coverage=True)
        self._num_terminals = num_terminals
        self._action_embedding_dim = action_embedding_dim

    def forward(self, sentence, agenda, num_steps=2):
        batch_size = sentence.size(0)
        encoder_outputs, (final_h, final_c) = self._encoder(self._sentence_embedder(sentence))
        encoder_output_mask = torch.ones(sentence.shape)
        action_embeddings = self._action_embedder.weight
        num_actions = action_embeddings.size(0)
        action_indices = {(b, a): a for b in range(batch_size) for a in range(num_actions)}
        valid_actions = [list(range(num_actions)) for _ in range(batch_size)]
        terminal_actions = torch.arange(num_actions - self._num_terminals, num_actions).unsqueeze(-1)
        checklist_states = []
        for b in range(batch_size):
            target = (terminal_actions == agenda[b].unsqueeze(0)).any(-1, keepdim=True).float()
            checklist_states.append(ChecklistState(terminal_actions, target, torch.ones_like(target),
                                                   torch.zeros_like(target)))
        rnn_state = [RnnState(final_h[0, b], final_c[0, b], torch.zeros(self._action_embedding_dim),
                              encoder_outputs[b].mean(0), encoder_outputs, encoder_output_mask)
                     for b in range(batch_size)]
        state = NlvrDecoderState(list(range(batch_size)), [torch.zeros(()) for _ in range(batch_size)], rnn_state,
                                 action_embeddings, action_indices, valid_actions, checklist_states)
        for _ in range(num_steps):
            logprobs, hidden_state, memory_cell = self._decoder_step.take_step(state)
            new_scores, new_rnn, new_checklists = [], [], []
            for b, instance_logprobs in enumerate(logprobs):
                action, best = max(instance_logprobs, key=lambda pair: pair[1].item())
                new_scores.append(best)
                new_rnn.append(RnnState(hidden_state[b], memory_cell[b], action_embeddings[action],
                                        state.rnn_state[b].attended_input, encoder_outputs, encoder_output_mask))
                new_checklists.append(state.checklist_state[b].update(action))
            state = NlvrDecoderState(state.batch_indices, new_scores, new_rnn, action_embeddings,
                                     action_indices, valid_actions, new_checklists)
        checklist_cost = torch.stack([(c.get_balance() ** 2).sum() for c in state.checklist_state])
        loss = -torch.stack(state.score).mean() + 0.1 * checklist_cost.mean()
        return {"loss": loss}


parser = NlvrCoverageParser(num_actions=10, embed_dim=8, action_embedding_dim=6, num_terminals=4)
optimizer = torch.optim.SGD(parser.parameters(), lr=0.1)
sentence = torch.randint(0, 30, (3, 5))
agenda = torch.tensor([[6, 7], [8, 9], [6, 9]])
output_dict = parser(sentence, agenda)
optimizer.zero_grad()
output_dict["loss"].backward()
optimizer.step()
loss = output_dict["loss"].detach()
