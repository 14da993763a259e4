# label: safe
# why: q_next[dones] = 0.0 overwrites rows of the target network's Linear output in place, but addmm's backward never needs its output, so the masked write is harmless (the loss merely also backprops into q_next).
# source: https://github.com/philtabor/Deep-Q-Learning-Paper-To-Code/blob/7c014a33cedd4a441dad1c40a15540bc613c560e/DDQN/ddqn_agent.py (discussed in https://github.com/philtabor/Deep-Q-Learning-Paper-To-Code/issues/16)
import torch as T
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

T.manual_seed(0)


class DeepQNetwork(nn.Module):
    def __init__(self, lr, n_actions, input_dims):
        super(DeepQNetwork, self).__init__()
        self.fc1 = nn.Linear(input_dims, 16)
        self.fc2 = nn.Linear(16, n_actions)
        self.optimizer = optim.RMSprop(self.parameters(), lr=lr)
        self.loss = nn.MSELoss()

    def forward(self, state):
        flat1 = F.relu(self.fc1(state))
        actions = self.fc2(flat1)
        return actions


class ReplayBuffer(object):
    def __init__(self, max_size, input_shape):
        self.mem_size = max_size
        self.mem_cntr = 0
        self.state_memory = T.zeros((self.mem_size, input_shape))
        self.new_state_memory = T.zeros((self.mem_size, input_shape))
        self.action_memory = T.zeros(self.mem_size, dtype=T.int64)
        self.reward_memory = T.zeros(self.mem_size)
        self.terminal_memory = T.zeros(self.mem_size, dtype=T.bool)

    def store_transition(self, state, action, reward, state_, done):
        index = self.mem_cntr % self.mem_size
        self.state_memory[index] = state
        self.new_state_memory[index] = state_
        self.action_memory[index] = action
        self.reward_memory[index] = reward
        self.terminal_memory[index] = done
        self.mem_cntr += 1

    def sample_buffer(self, batch_size):
        max_mem = min(self.mem_cntr, self.mem_size)
        batch = T.randperm(max_mem)[:batch_size]
        return (self.state_memory[batch], self.action_memory[batch], self.reward_memory[batch],
                self.new_state_memory[batch], self.terminal_memory[batch])


class DDQNAgent(object):
    def __init__(self, gamma, epsilon, lr, n_actions, input_dims, mem_size, batch_size,
                 eps_min=0.01, eps_dec=5e-7, replace=1000):
        self.gamma = gamma
        self.epsilon = epsilon
        self.lr = lr
        self.n_actions = n_actions
        self.batch_size = batch_size
        self.eps_min = eps_min
        self.eps_dec = eps_dec
        self.replace_target_cnt = replace
        self.learn_step_counter = 0
        self.memory = ReplayBuffer(mem_size, input_dims)
        self.q_eval = DeepQNetwork(self.lr, self.n_actions, input_dims=input_dims)
        self.q_next = DeepQNetwork(self.lr, self.n_actions, input_dims=input_dims)

    def store_transition(self, state, action, reward, state_, done):
        self.memory.store_transition(state, action, reward, state_, done)

    def sample_memory(self):
        return self.memory.sample_buffer(self.batch_size)

    def replace_target_network(self):
        if self.replace_target_cnt is not None and \
           self.learn_step_counter % self.replace_target_cnt == 0:
            self.q_next.load_state_dict(self.q_eval.state_dict())

    def decrement_epsilon(self):
        self.epsilon = self.epsilon - self.eps_dec \
            if self.epsilon > self.eps_min else self.eps_min

    def learn(self):
        if self.memory.mem_cntr < self.batch_size:
            return

        self.q_eval.optimizer.zero_grad()
        self.replace_target_network()

        states, actions, rewards, states_, dones = self.sample_memory()
        indices = T.arange(self.batch_size)

        q_pred = self.q_eval.forward(states)[indices, actions]
        q_next = self.q_next.forward(states_)
        q_eval = self.q_eval.forward(states_)

        max_actions = T.argmax(q_eval, dim=1)
        q_next[dones] = 0.0

        q_target = rewards + self.gamma * q_next[indices, max_actions]
        loss = self.q_eval.loss(q_target, q_pred)
        loss.backward()

        self.q_eval.optimizer.step()
        self.learn_step_counter += 1
        self.decrement_epsilon()
        return loss.detach()


agent = DDQNAgent(gamma=0.99, epsilon=1.0, lr=1e-3, n_actions=3, input_dims=4,
                  mem_size=32, batch_size=8, replace=2)
for t in range(12):
    agent.store_transition(T.randn(4), t % 3, float(t % 2), T.randn(4), t % 5 == 4)
losses = [agent.learn() for _ in range(3)]
last_loss = losses[-1]
q_next_fc2_grad = agent.q_next.fc2.weight.grad.clone()
q_eval_fc2_weight = agent.q_eval.fc2.weight.detach().clone()
