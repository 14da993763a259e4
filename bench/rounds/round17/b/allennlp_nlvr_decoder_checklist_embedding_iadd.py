# label: hazard raises
# why: with dropout disabled self._dropout is the identity lambda, so predicted_action_embedding is still relu's output (saved by ReluBackward) when the checklist embedding is added to it with +=.
# source: https://github.com/allenai/allennlp/commit/2dda95beede0322bf9bde1d99803113aaabf30bc
from collections import namedtuple

import torch
from torch.nn import Linear, LSTMCell, Parameter

torch.manual_seed(0)

RnnState = namedtuple("RnnState", ["hidden_state", "memory_cell", "previous_action_embedding", "attended_input"])
ChecklistState = namedtuple("ChecklistState", ["terminal_actions", "checklist_target", "checklist"])


class NlvrDecoderState:
    def __init__(self, rnn_state, checklist_state, encoder_outputs, action_embedder):
        self.rnn_state, self.checklist_state = rnn_state, checklist_state
        self.encoder_outputs, self.action_embedder = encoder_outputs, action_embedder


class NlvrDecoderStep(torch.nn.Module):
    def __init__(self, encoder_output_dim, action_embedding_dim, dropout=0.0, use_coverage=False):
        super().__init__()
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

    def attend_on_sentence(self, query, encoder_outputs):
        weights = torch.softmax(torch.bmm(encoder_outputs, query.unsqueeze(-1)).squeeze(-1), dim=-1)
        return torch.bmm(weights.unsqueeze(1), encoder_outputs).squeeze(1)

    def _get_predicted_embedding_addition(self, state):
        checklist_balances = []
        for instance_checklist_state in state.checklist_state:
            balance = instance_checklist_state.checklist_target - instance_checklist_state.checklist
            checklist_balances.append(balance.clamp(min=0.0))
        checklist_balance = torch.stack(checklist_balances)
        actions_in_agenda = state.checklist_state[0].terminal_actions
        action_embeddings = state.action_embedder(actions_in_agenda)
        return (checklist_balance.unsqueeze(-1) * action_embeddings.unsqueeze(0)).sum(1)

    def take_step(self, state):
        attended_sentence = torch.stack([rnn_state.attended_input for rnn_state in state.rnn_state])
        hidden_state = torch.stack([rnn_state.hidden_state for rnn_state in state.rnn_state])
        memory_cell = torch.stack([rnn_state.memory_cell for rnn_state in state.rnn_state])
        previous_action_embedding = torch.stack([rnn_state.previous_action_embedding for rnn_state in state.rnn_state])
        decoder_input = self._input_projection_layer(torch.cat([attended_sentence, previous_action_embedding], -1))
        hidden_state, memory_cell = self._decoder_cell(decoder_input, (hidden_state, memory_cell))
        hidden_state = self._dropout(hidden_state)
        attended_sentence = self.attend_on_sentence(hidden_state, state.encoder_outputs)
        action_embeddings = state.action_embedder.weight.unsqueeze(0).expand(hidden_state.size(0), -1, -1)
        action_query = torch.cat([hidden_state, attended_sentence], dim=-1)
        predicted_action_embedding = self._output_projection_layer(action_query)
        predicted_action_embedding = self._dropout(torch.nn.functional.relu(predicted_action_embedding))
        if state.checklist_state[0] is not None:
            embedding_addition = self._get_predicted_embedding_addition(state)
            predicted_action_embedding += self._checklist_embedding_multiplier * embedding_addition  # <-- IPL001: modifies relu's saved output when dropout is the identity
        action_logits = action_embeddings.bmm(predicted_action_embedding.unsqueeze(-1)).squeeze(-1)
        return torch.nn.functional.log_softmax(action_logits, dim=-1)


group_size, enc_dim, act_dim, num_actions, sent_len = 2, 6, 5, 7, 4
action_embedder = torch.nn.Embedding(num_actions, act_dim)
step = NlvrDecoderStep(enc_dim, act_dim, dropout=0.0, use_coverage=True)
rnn_state = [RnnState(torch.randn(enc_dim), torch.randn(enc_dim), torch.randn(act_dim), torch.randn(enc_dim))
             for _ in range(group_size)]
terminal_actions = torch.tensor([1, 3, 4])
checklist_state = [ChecklistState(terminal_actions, torch.ones(3), torch.tensor([0.0, 1.0, 0.0]))
                   for _ in range(group_size)]
state = NlvrDecoderState(rnn_state, checklist_state, torch.randn(group_size, sent_len, enc_dim), action_embedder)
logprobs = step.take_step(state)
loss = -logprobs[:, 2].mean()
loss.backward()
